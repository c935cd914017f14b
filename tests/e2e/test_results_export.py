"""Exporting a 3,000-result job over the real stack: JSONL and CSV equal the results API."""

from __future__ import annotations

import csv
import io
import json

import pytest

from scrapejobs_devstack.demo_site.catalog import Product
from scrapejobs_dispatcher.jobs.result_export import RESULT_COLUMNS, cell
from support.jobs import PRODUCT_FIELDS, all_results, submit, wait_finished

pytestmark = [pytest.mark.emulators, pytest.mark.stack]

TASKS = 3_000


async def test_export_of_a_3000_result_job_equals_the_results_api(api, site) -> None:
    urls = [f"{site.url}/product/{n}" for n in range(TASKS)]
    body = {"urls": urls, "extract": PRODUCT_FIELDS, "options": {"formats": ["metadata"]}}
    job = await submit(api, body)
    await wait_finished(api, job["id"], timeout_s=240)
    expected = await all_results(api, job["id"], page_size=1000)
    assert len(expected) == TASKS

    jsonl = await api.get(f"/v1/jobs/{job['id']}/results:export", params={"format": "jsonl"})
    assert jsonl.status_code == 200, jsonl.text
    assert jsonl.headers["content-type"] == "application/x-ndjson"
    assert f'filename="job-{job["id"]}-results.jsonl"' in jsonl.headers["content-disposition"]
    assert [json.loads(line) for line in jsonl.text.splitlines()] == expected

    exported = await api.get(f"/v1/jobs/{job['id']}/results:export", params={"format": "csv"})
    assert exported.status_code == 200, exported.text
    assert exported.headers["content-type"].startswith("text/csv")
    reader = csv.DictReader(io.StringIO(exported.text, newline=""))
    assert reader.fieldnames is not None
    data_columns = [name for name in reader.fieldnames if name.startswith("data.")]
    assert reader.fieldnames == [*RESULT_COLUMNS, *data_columns, "other_data"]
    # the extract fields first (in the order the store keeps the spec), then the first page's
    assert set(data_columns[:5]) == {f"data.{name}" for name in PRODUCT_FIELDS}
    assert "data.metadata.title" in data_columns
    rows = list(reader)
    assert len(rows) == TASKS
    for row, result in zip(rows, expected, strict=True):
        assert {name: row[name] for name in RESULT_COLUMNS} == {
            name: cell(result[name]) for name in RESULT_COLUMNS
        }
        product = Product(int(result["url"].rsplit("/", 1)[1]))
        data = result["data"]
        assert row["data.title"] == data["title"] == product.title
        assert row["data.price"] == product.price and row["data.sku"] == product.sku
        assert json.loads(row["data.tags"]) == data["tags"] == product.tags
        assert row["data.metadata.title"] == data["metadata"]["title"]
        assert row["other_data"] == ""


async def test_export_of_an_unknown_job_is_404_and_a_bad_format_422(api, site) -> None:
    missing = await api.get("/v1/jobs/nope/results:export", params={"format": "csv"})
    assert missing.status_code == 404 and missing.json()["error"]["code"] == "not_found"
    job = await submit(api, {"url": f"{site.url}/product/1"})
    bad = await api.get(f"/v1/jobs/{job['id']}/results:export", params={"format": "parquet"})
    assert bad.status_code == 422 and bad.json()["error"]["field"] == "format"
