"""Rendered jobs on the real local stack: the render lane pushes to the renderer (a worker
driving Debian's Chromium), script-built content is extracted with ``render`` and not without
it, ``render: "auto"`` renders the script-built pages of a job and none of its plain ones, the
waits work through the API, and a browser killed in the middle of a batch loses and doubles no
task."""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
import signal
import time
from pathlib import Path

import psutil
import pytest
from typer.testing import CliRunner

from scrapejobs_client import Client
from scrapejobs_client.cli import app
from support.jobs import PRODUCT_FIELDS, all_results, submit, wait_finished

pytestmark = [pytest.mark.emulators, pytest.mark.stack]
WAIT_JSON = ("--wait-for", "h1.title", "--json")


async def test_script_built_content_is_extracted_with_render_and_not_without(
    api, site, renderer
) -> None:
    url = f"{site.url}/scripted/12"
    plain = await submit(api, {"url": url, "extract": PRODUCT_FIELDS})
    rendered = await submit(
        api, {"url": url, "extract": PRODUCT_FIELDS, "options": {"render": True}}
    )

    await wait_finished(api, plain["id"])
    await wait_finished(api, rendered["id"])
    [without] = await all_results(api, plain["id"])
    [with_render] = await all_results(api, rendered["id"])
    # fetched plainly, the page is an app shell: no success with nothing (docs/semantics.md)
    assert without["status"] == "failed" and without["error"].startswith("empty_content:")
    assert "options.render" in without["error"]
    assert without["rendered"] is False and without["rendered_ms"] is None
    assert with_render["status"] == "succeeded", with_render
    assert with_render["data"]["title"] == "Product 12"
    assert with_render["data"]["price"] == "444.99"
    assert with_render["data"]["tags"] == ["tag0", "tag2"]
    assert with_render["rendered"] is True and with_render["rendered_ms"] >= 0
    job = (await api.get(f"/v1/jobs/{rendered['id']}")).json()
    assert job["rendered"] is True and plain["rendered"] is False


async def test_render_auto_renders_only_the_pages_that_show_nothing(api, site, renderer) -> None:
    tag = str(time.time_ns())
    scripted = [f"{site.url}/scripted/{n}?t={tag}" for n in (21, 22)]
    plain = [f"{site.url}/product/{n}?t={tag}" for n in range(40, 46)]
    api_calls = {n: site.count(f"/api/product/{n}") for n in (21, 22)}
    body = {"urls": scripted + plain, "extract": PRODUCT_FIELDS, "options": {"render": "auto"}}
    job = await submit(api, body)
    final = await wait_finished(api, job["id"])

    assert final["counts"]["succeeded"] == 8, final
    results = {r["url"]: r for r in await all_results(api, job["id"])}
    for n, url in zip((21, 22), scripted, strict=True):
        assert results[url]["rendered"] is True and results[url]["data"]["title"] == f"Product {n}"
        # a browser ran the page's script: it asked the site for the product once
        assert site.count(f"/api/product/{n}") == api_calls[n] + 1
    for n, url in zip(range(40, 46), plain, strict=True):
        assert results[url]["rendered"] is False, results[url]  # no browser page taken
        assert results[url]["data"]["title"] == f"Product {n}"


async def test_wait_for_and_wait_ms_through_the_api(api, site, renderer) -> None:
    late = f"{site.url}/scripted/3?delay_ms=1500"
    waited_for = await submit(
        api,
        {
            "url": late,
            "extract": PRODUCT_FIELDS,
            "options": {"render": {"wait_for": "h1.title"}},
        },
    )
    waited = await submit(
        api,
        {
            "urls": [f"{site.url}/scripted/4?delay_ms=1000"],
            "extract": PRODUCT_FIELDS,
            "options": {"render": {"wait_ms": 2500}},
        },
    )

    for job in (waited_for, waited):
        await wait_finished(api, job["id"])
    [first] = await all_results(api, waited_for["id"])
    [second] = await all_results(api, waited["id"])
    assert first["data"]["title"] == "Product 3" and first["rendered_ms"] >= 1400
    assert second["data"]["title"] == "Product 4" and second["rendered_ms"] >= 2400


async def test_a_wait_for_that_never_matches_ends_render_timeout(api, site, renderer) -> None:
    job = await submit(
        api,
        {
            "url": f"{site.url}/product/5",
            "options": {"render": {"wait_for": "#never"}, "timeout_s": 2, "max_attempts": 1},
        },
    )
    await wait_finished(api, job["id"])
    [result] = await all_results(api, job["id"])
    assert result["status"] == "failed"
    assert result["error"].startswith("render_timeout"), result


async def test_a_killed_browser_loses_and_doubles_no_task(api, site, renderer) -> None:
    urls = [f"{site.url}/scripted/{n}?delay_ms=400" for n in range(100, 116)]
    job = await submit(api, {"urls": urls, "extract": PRODUCT_FIELDS, "options": {"render": True}})

    killed = await _kill_browser_while_rendering(site, range(100, 116), renderer.pid)

    finished = await wait_finished(api, job["id"], timeout_s=180)
    assert killed, "the browser was never seen running"
    results = await all_results(api, job["id"])
    assert sorted(r["url"] for r in results) == sorted(urls)  # each task once
    assert finished["counts"]["succeeded"] == len(urls), [
        (r["status"], r["error"]) for r in results if r["status"] != "succeeded"
    ]
    assert all(
        r["data"]["title"] == f"Product {r['url'].split('/')[-1].split('?')[0]}" for r in results
    )
    assert any(r["attempts"] > 1 for r in results)  # the killed pages were rendered again


async def _kill_browser_while_rendering(site, numbers: range, renderer_pid: int) -> int:
    """SIGKILL every Chromium process of the renderer while a page is being rendered. The
    renderer fetches ``/scripted/N`` as a plain page first, then renders it in the browser,
    whose script asks ``/api/product/N`` after its ``delay_ms``: so once some page's script has
    asked (the browser is up) and another page was fetched over ``RENDERING_S`` ago with its
    script yet to ask, that page is in the browser (or waits for a page of it, while others
    render): its render is lost with the browser."""
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        if _browser_is_up(site, numbers) and any(_rendering(site, n) for n in numbers):
            break
        await asyncio.sleep(0.01)
    killed = 0
    for child in psutil.Process(renderer_pid).children(recursive=True):
        with contextlib.suppress(psutil.Error, ProcessLookupError):
            if "chrom" in child.name():
                os.kill(child.pid, signal.SIGKILL)
                killed += 1
    return killed


RENDERING_S = 0.15  # well after the plain fetch, well before the script's 400 ms end


def _browser_is_up(site, numbers: range) -> bool:
    return any(site.count(f"/api/product/{n}") for n in numbers)


def _rendering(site, number: int) -> bool:
    page, script = f"/scripted/{number}", f"/api/product/{number}"
    with site.lock:
        fetched = site.times.get(page, [])
        if len(fetched) <= site.hits[script]:
            return False
        return time.monotonic() - fetched[-1] > RENDERING_S


def test_the_client_and_the_cli_render(stack, site, renderer, tmp_path: Path) -> None:
    with Client(stack.config.dispatcher_url) as client:
        job = client.submit([f"{site.url}/scripted/7"], extract=PRODUCT_FIELDS, render=True)
        assert job.rendered is True
        client.wait(job.id, interval_s=0.2, timeout_s=60)
        [result] = list(client.results(job.id))
        assert result.rendered and result.data is not None
        assert result.data["title"] == "Product 7"
        scraped = client.scrape(
            f"{site.url}/scripted/8?delay_ms=500",
            extract=PRODUCT_FIELDS,
            render={"wait_for": "h1.title"},
        )
        assert scraped.result is not None and scraped.result.data is not None
        assert scraped.result.data["title"] == "Product 8"
    extract = tmp_path / "extract.json"
    extract.write_text(json.dumps(PRODUCT_FIELDS))
    base = ["--api", stack.config.dispatcher_url]
    runner = CliRunner()
    scraped_cli = runner.invoke(
        app,
        [*base, "scrape", f"{site.url}/scripted/9?delay_ms=500", "-e", str(extract), *WAIT_JSON],
    )
    assert scraped_cli.exit_code == 0, scraped_cli.output
    result = json.loads(scraped_cli.stdout)["result"]
    assert result["data"]["title"] == "Product 9" and result["rendered"] is True
    submitted = runner.invoke(
        app,
        [*base, "submit", f"{site.url}/scripted/10", "-e", str(extract), "--render", "--json"],
    )
    assert submitted.exit_code == 0, submitted.output
    assert json.loads(submitted.stdout)["rendered"] is True


async def test_through_the_stack_a_hostile_page_reaches_no_refused_address(
    api, site, refused_server, narrowed_renderer
) -> None:
    there, accepted = refused_server
    page = await submit(
        api,
        {
            "url": f"{site.url}/hostile?to={there}",
            "extract": {"ok": {"css": "#ok::text"}, "built": {"css": "#built::text"}},
            "options": {"render": {"block": [], "wait_ms": 500}},
        },
    )
    top = await submit(api, {"url": there, "options": {"render": True, "max_attempts": 1}})

    for job in (page, top):
        await wait_finished(api, job["id"])
    [scraped] = await all_results(api, page["id"])
    [blocked] = await all_results(api, top["id"])
    assert scraped["status"] == "succeeded", scraped
    assert scraped["data"] == {"ok": "still here", "built": "built"}
    assert blocked["status"] == "failed" and blocked["error"].startswith("blocked_destination")
    assert accepted == []
