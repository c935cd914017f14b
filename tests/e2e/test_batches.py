"""Batched delivery on the real stack: per-URL semantics inside one batch, duplicate and
concurrent deliveries, a worker killed mid-batch, and a batch too long for its ack deadline."""

from __future__ import annotations

import asyncio
import time

import httpx
import pytest

from support.jobs import (
    PRODUCT_FIELDS,
    all_results,
    envelope_of,
    submit,
    wait_finished,
    write_job_directly,
)

pytestmark = [pytest.mark.emulators, pytest.mark.stack]


async def test_every_row_of_the_failure_table_inside_one_batch(api, site, stack) -> None:
    paths = {
        "ok": "/product/7",
        "not_found": "/status/404/mixed",
        "flaky": "/flaky/mixed?fail=2&code=500",
        "always_500": "/status/500/mixed",
        "throttled": "/throttle/mixed",
        "robots": "/robots-private/mixed",
    }
    urls = {name: f"{site.url}{path}" for name, path in paths.items()}
    urls["blocked"] = "http://169.254.169.254/computeMetadata/v1/"
    job = await submit(api, {"urls": list(urls.values()), "extract": PRODUCT_FIELDS})

    final = await wait_finished(api, job["id"], timeout_s=120)

    by_url = {r["url"]: r for r in await all_results(api, job["id"])}
    results = {name: by_url[url] for name, url in urls.items()}
    assert len(by_url) == len(urls)  # one result per URL
    assert results["ok"]["status"] == "succeeded" and results["ok"]["attempts"] == 1
    assert results["ok"]["data"]["title"] == "Product 7"
    assert results["not_found"]["status"] == "failed"
    assert results["not_found"]["error"] == "HTTP 404"
    assert results["flaky"]["status"] == "succeeded" and results["flaky"]["attempts"] == 3
    always = results["always_500"]
    assert always["status"] == "dead_lettered" and always["error"] == "HTTP 500"
    assert always["attempts"] == stack.config.topology.max_delivery_attempts
    throttled = results["throttled"]
    assert throttled["status"] == "succeeded" and throttled["attempts"] == 1  # not counted
    assert results["robots"]["status"] == "failed"
    assert results["robots"]["error"] == "robots_disallowed"
    assert results["blocked"]["status"] == "failed"
    assert results["blocked"]["error"].startswith("blocked_destination")
    assert site.count("/robots-private/mixed") == 0
    assert site.count("/flaky/mixed") == 3 and site.count("/product/7") == 1
    assert final["counts"] == {
        "queued": 0,
        "running": 0,
        "processing": 0,
        "succeeded": 3,
        "failed": 3,
        "dead_lettered": 1,
        "cancelled": 0,
    }


async def test_a_batch_delivered_twice_concurrently_fetches_each_url_once(
    api, site, stack, store
) -> None:
    urls = [f"{site.url}/slow/twice-{n}?s=0.5&times=1" for n in range(6)]
    job_id, [batch] = await write_job_directly(store, urls)
    envelope = envelope_of(batch)
    async with httpx.AsyncClient(base_url=stack.config.worker_url, timeout=30) as worker:
        concurrent = await asyncio.gather(
            *(worker.post("/pubsub/push", json=envelope) for _ in range(3))
        )
        later = await worker.post("/pubsub/push", json=envelope)
        dead_letter = await worker.post("/pubsub/dead-letter", json=envelope)

    assert [r.status_code for r in concurrent] == [204, 204, 204]
    assert later.status_code == 204 and dead_letter.status_code == 204
    assert all(site.count(f"/slow/twice-{n}") == 1 for n in range(6))
    final = await wait_finished(api, job_id)
    assert final["counts"]["succeeded"] == 6
    results = await all_results(api, job_id)
    assert len(results) == 6 and {r["attempts"] for r in results} == {1}


async def test_worker_killed_mid_batch_leaves_one_result_per_url(api, site, stack) -> None:
    urls = [f"{site.url}/slow/kill-{n}?s=1&times=1" for n in range(24)]
    job = await submit(api, {"urls": urls, "extract": PRODUCT_FIELDS})
    deadline = time.monotonic() + 30
    while sum(site.count(f"/slow/kill-{n}") for n in range(24)) < 4:
        assert time.monotonic() < deadline, "the worker never fetched"
        await asyncio.sleep(0.05)
    assert stack.worker is not None
    stack.worker.kill()  # SIGKILL, mid-batch
    stack.start_worker()

    final = await wait_finished(api, job["id"], timeout_s=120)

    results = await all_results(api, job["id"])
    assert final["counts"]["succeeded"] == 24 and final["total"] == 24
    assert sorted(r["url"] for r in results) == sorted(urls)  # exactly one result per URL
    assert all(r["status"] == "succeeded" for r in results)


async def test_a_batch_too_long_for_its_ack_deadline_defers_the_rest(
    api, site, stack, store
) -> None:
    urls = [f"{site.url}/slow/long-{n}?s=3&times=1" for n in range(60)]
    job_id, [batch] = await write_job_directly(store, urls, batch_size=60)
    async with httpx.AsyncClient(base_url=stack.config.worker_url, timeout=60) as worker:
        started = time.monotonic()
        response = await worker.post("/pubsub/push", json=envelope_of(batch))
        elapsed = time.monotonic() - started

    assert response.status_code == 204  # deferred: the rest was published again
    ack_deadline_s = stack.config.topology.ack_deadline_s
    assert elapsed < ack_deadline_s, f"overran the ack deadline: {elapsed:.1f} s"
    fetched = sum(site.count(f"/slow/long-{n}") for n in range(60))
    assert 0 < fetched < 60
    final = await wait_finished(api, job_id, timeout_s=120)
    assert final["counts"]["succeeded"] == 60
    assert all(site.count(f"/slow/long-{n}") == 1 for n in range(60))
