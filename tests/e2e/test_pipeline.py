"""The core pipeline end to end: real emulators, both services as processes, a real local site."""

from __future__ import annotations

import pytest

from scrapejobs_devstack.demo_site.catalog import Product
from support.jobs import PRODUCT_FIELDS, all_results, submit, wait_finished

pytestmark = [pytest.mark.emulators, pytest.mark.stack]


async def test_200_url_job_extracts_true_values(api, site) -> None:
    urls = [f"{site.url}/product/{n}" for n in range(200)]
    job = await submit(api, {"urls": urls, "extract": PRODUCT_FIELDS, "labels": {"t": "200"}})
    assert job["status"] == "queued" and job["total"] == 200

    final = await wait_finished(api, job["id"])

    assert final["status"] == "completed"
    assert final["counts"]["succeeded"] == 200 and final["labels"] == {"t": "200"}
    results = await all_results(api, job["id"], page_size=37)
    assert sorted(r["url"] for r in results) == sorted(urls)
    for result in results:
        product = Product(int(result["url"].rsplit("/", 1)[1]))
        assert result["status"] == "succeeded" and result["http_status"] == 200
        assert result["data"] == {
            "title": product.title,
            "price": product.price,
            "sku": product.sku,
            "tags": product.tags,
            "missing": "n/a",
        }
        assert result["attempts"] == 1 and result["error"] is None
        assert result["fetched_at"] and result["elapsed_ms"] >= 0


async def test_failures_retry_dead_letter_and_fail_permanently(api, site) -> None:
    urls = {
        "dead": f"{site.url}/status/500/always",
        "flaky": f"{site.url}/flaky/twice?fail=2&code=500",
        "missing": f"{site.url}/status/404/gone",
    }
    job = await submit(api, {"urls": list(urls.values()), "extract": PRODUCT_FIELDS})

    final = await wait_finished(api, job["id"], timeout_s=180)

    by_url = {r["url"]: r for r in await all_results(api, job["id"])}
    dead, flaky, missing = (by_url[urls[k]] for k in ("dead", "flaky", "missing"))
    assert dead["status"] == "dead_lettered" and dead["error"] == "HTTP 500"
    assert dead["attempts"] == 5 and site.count("/status/500/always") == 5
    assert flaky["status"] == "succeeded" and flaky["attempts"] == 3
    assert flaky["data"]["title"] == "Product 7" and flaky["error"] is None
    assert missing["status"] == "failed" and missing["attempts"] == 1
    assert missing["http_status"] == 404 and site.count("/status/404/gone") == 1
    assert final["counts"] == {
        "queued": 0,
        "running": 0,
        "processing": 0,
        "succeeded": 1,
        "failed": 1,
        "dead_lettered": 1,
        "cancelled": 0,
    }


async def test_single_url_and_job_listing_newest_first(api, site) -> None:
    first = await submit(api, {"url": f"{site.url}/product/41", "labels": {"l": "1"}})
    job = await submit(
        api, {"url": f"{site.url}/product/42", "extract": {"t": {"css": "h1::text"}}}
    )
    await wait_finished(api, first["id"])
    await wait_finished(api, job["id"])
    [result] = await all_results(api, job["id"])
    assert result["data"] == {"t": "Product 42"}

    params = {"status": "completed", "page_size": 1}
    listed = (await api.get("/v1/jobs", params=params)).json()
    assert listed["jobs"][0]["id"] == job["id"] and listed["next_page_token"]
    params["page_token"] = listed["next_page_token"]
    second = (await api.get("/v1/jobs", params=params)).json()
    assert second["jobs"][0]["id"] == first["id"]
    assert second["jobs"][0]["labels"] == {"l": "1"}
