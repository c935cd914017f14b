"""POST /v1/scrape on the real local stack (emulators, both services, a local site): one page
answered in the request through the same queue and worker; a slow page is a 202 naming a job
that later completes; the client's scrape() and the CLI's ``scrapejobs scrape``."""

from __future__ import annotations

import json
import time
import uuid
from pathlib import Path

import pytest
from typer.testing import CliRunner

from scrapejobs_client import Client, ScrapeTimedOut
from scrapejobs_client.cli import ExitCode, app
from support.jobs import PRODUCT_FIELDS

pytestmark = [pytest.mark.emulators, pytest.mark.stack]


async def test_a_scrape_answers_with_the_extracted_page(api, site) -> None:
    response = await api.post(
        "/v1/scrape", json={"url": f"{site.url}/product/21", "extract": PRODUCT_FIELDS}
    )
    assert response.status_code == 200, response.text
    scraped = response.json()
    assert scraped["status"] == "completed"
    result = scraped["result"]
    assert result["status"] == "succeeded" and result["http_status"] == 200
    assert result["data"]["title"] == "Product 21" and result["data"]["missing"] == "n/a"
    job = (await api.get(f"/v1/jobs/{scraped['job_id']}")).json()  # an ordinary job, too
    assert job["total"] == 1 and job["counts"]["succeeded"] == 1


async def test_a_slow_page_is_a_202_naming_the_job_which_then_completes(api, site) -> None:
    url = f"{site.url}/slow/{uuid.uuid4().hex}?s=3"
    response = await api.post("/v1/scrape", json={"url": url, "timeout_s": 0.5})
    assert response.status_code == 202, response.text
    job_id = response.json()["job_id"]
    assert response.headers["location"] == f"/v1/jobs/{job_id}"
    deadline = time.monotonic() + 60
    while (job := (await api.get(f"/v1/jobs/{job_id}")).json())["status"] != "completed":
        assert time.monotonic() < deadline, job
        time.sleep(0.2)
    [result] = (await api.get(f"/v1/jobs/{job_id}/results")).json()["results"]
    assert result["status"] == "succeeded" and result["url"] == url


async def test_bad_input_is_a_422_naming_the_field_and_creates_no_job(api) -> None:
    before = (await api.get("/v1/jobs", params={"page_size": 100})).json()["jobs"]
    response = await api.post("/v1/scrape", json={"url": "http://127.0.0.1/", "timeout_s": -1})
    assert response.status_code == 422
    assert response.json()["error"]["field"] == "timeout_s"
    after = (await api.get("/v1/jobs", params={"page_size": 100})).json()["jobs"]
    assert [j["id"] for j in after] == [j["id"] for j in before]


def test_the_client_and_the_cli_scrape(stack, site, tmp_path: Path) -> None:
    with Client(stack.config.dispatcher_url) as client:
        scraped = client.scrape(f"{site.url}/product/4", extract=PRODUCT_FIELDS)
        assert scraped.result is not None and scraped.result.data is not None
        assert scraped.result.data["title"] == "Product 4"
        with pytest.raises(ScrapeTimedOut) as timed_out:
            client.scrape(f"{site.url}/slow/{uuid.uuid4().hex}?s=2", timeout_s=0.3)
        assert client.wait(timed_out.value.job_id, interval_s=0.2, timeout_s=60).status == (
            "completed"
        )
    extract = tmp_path / "extract.json"
    extract.write_text(json.dumps(PRODUCT_FIELDS))
    runner = CliRunner()
    base = ["--api", stack.config.dispatcher_url, "scrape"]
    ok = runner.invoke(app, [*base, f"{site.url}/product/9", "-e", str(extract), "--json"])
    assert ok.exit_code == 0, ok.output
    assert json.loads(ok.stdout)["result"]["data"]["title"] == "Product 9"
    missing = runner.invoke(app, [*base, f"{site.url}/status/404/{uuid.uuid4().hex}"])
    assert missing.exit_code == ExitCode.JOB_UNSUCCESSFUL, missing.output
    slow = runner.invoke(
        app, [*base, f"{site.url}/slow/{uuid.uuid4().hex}?s=2", "--timeout", "0.3", "--json"]
    )
    assert slow.exit_code == ExitCode.WAIT_TIMEOUT, slow.output
