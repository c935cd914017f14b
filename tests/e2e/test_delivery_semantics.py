"""At-least-once delivery: duplicates, crashes, cancellation, against the real stack."""

from __future__ import annotations

import asyncio
import time
from datetime import timedelta

import pytest

from support.jobs import (
    PRODUCT_FIELDS,
    all_results,
    submit,
    wait_finished,
    write_job_directly,
)

pytestmark = [pytest.mark.emulators, pytest.mark.stack]


async def test_worker_killed_mid_fetch_redelivers_and_completes_once(api, site, stack) -> None:
    job = await submit(
        api, {"url": f"{site.url}/slow/crash?s=3&times=1", "extract": PRODUCT_FIELDS}
    )
    deadline = time.monotonic() + 30
    while site.count("/slow/crash") == 0:
        assert time.monotonic() < deadline, "the worker never fetched"
        await asyncio.sleep(0.05)
    assert stack.worker is not None
    stack.worker.kill()  # SIGKILL, mid-fetch
    stack.start_worker()

    final = await wait_finished(api, job["id"], timeout_s=90)

    [result] = await all_results(api, job["id"])
    assert final["counts"]["succeeded"] == 1 and final["total"] == 1
    assert result["status"] == "succeeded" and result["data"]["title"] == "Product 3"
    assert result["attempts"] == 2 and site.count("/slow/crash") == 2


async def test_one_url_jobs_in_flight_when_the_worker_is_killed_complete_once(
    api, site, stack
) -> None:
    """Ten one-URL jobs (one Firestore document each, claimed without a read) in flight, the
    worker SIGKILLed mid-fetch: each is fetched again and completes once, none lost. A push
    the emulator makes while the worker restarts is refused and dropped for good (production
    Pub/Sub retries it): the reconcile finds those jobs (their leases lapsed) and publishes
    them again."""
    keys = [f"crash-many-{n}-{time.monotonic_ns()}" for n in range(10)]
    jobs = await asyncio.gather(
        *(
            submit(api, {"url": f"{site.url}/slow/{key}?s=3&times=1", "extract": PRODUCT_FIELDS})
            for key in keys
        )
    )
    deadline = time.monotonic() + 30
    while sum(site.count(f"/slow/{key}") > 0 for key in keys) < 4:
        assert time.monotonic() < deadline, "the worker never fetched them"
        await asyncio.sleep(0.05)
    assert stack.worker is not None
    stack.worker.kill()  # SIGKILL, with fetches under way
    stack.start_worker()

    deadline = time.monotonic() + 180
    for job, key in zip(jobs, keys, strict=True):
        while (final := (await api.get(f"/v1/jobs/{job['id']}")).json())["status"] != ("completed"):
            assert time.monotonic() < deadline, final
            await api.post("/v1/maintenance/reconcile", params={"older_than_s": 1})
            await asyncio.sleep(0.5)
        assert final["total"] == 1 and final["counts"]["succeeded"] == 1, final
        [result] = await all_results(api, job["id"])
        assert result["status"] == "succeeded"
        # fetched at most once per attempt (a claim counts one, though its fetch may not
        # have started: the site's pages wait for their host's places)
        assert 1 <= site.count(f"/slow/{key}") <= result["attempts"] <= 2


async def test_cancelled_job_never_fetches_unstarted_tasks(api, site) -> None:
    urls = [f"{site.url}/slow/cancel-{n}?s=0.5&times=1" for n in range(40)]
    # One batch: claimed perhaps just before the cancel, it sees it at its next commit (within
    # the flush interval), so two lanes fetch a few pages at most.
    options = {"per_host_concurrency": 2}
    job = await submit(api, {"urls": urls, "extract": PRODUCT_FIELDS, "options": options})
    response = await api.post(f"/v1/jobs/{job['id']}:cancel")
    assert response.status_code == 200 and response.json()["status"] == "cancelled"

    final = await wait_finished(api, job["id"], timeout_s=120)

    assert final["status"] == "cancelled"
    results = await all_results(api, job["id"])
    cancelled = [r for r in results if r["status"] == "cancelled"]
    assert len(cancelled) >= 30, final["counts"]
    for result in cancelled:
        path = result["url"].split("127.0.0.1", 1)[1].split(":", 1)[1]
        path = "/" + path.split("/", 1)[1].split("?", 1)[0]
        assert site.count(path) == 0, f"{path} was fetched after cancel"
    again = await api.post(f"/v1/jobs/{job['id']}:cancel")
    assert again.status_code == 200 and again.json()["status"] == "cancelled"


async def test_submission_stopped_before_publishing_is_recovered(api, site, store) -> None:
    urls = [f"{site.url}/product/{i}" for i in range(3)]
    # As if the dispatcher died after writing the job, before publishing.
    job_id, _ = await write_job_directly(store, urls, age=timedelta(minutes=10), publishing=True)

    response = await api.post("/v1/maintenance/republish")

    assert response.status_code == 200 and response.json()["tasks"] >= 3
    final = await wait_finished(api, job_id)
    assert final["counts"]["succeeded"] == 3
