"""Self-healing on the real stack: the Pub/Sub emulator drops the messages it pushes while the
worker refuses connections; reconcile finds the batches that stopped moving and publishes them
again, so the job completes with exactly one result per URL."""

from __future__ import annotations

import asyncio
import time

import pytest

from support.jobs import PRODUCT_FIELDS, all_results, submit

pytestmark = [pytest.mark.emulators, pytest.mark.stack]

STALLED_S = 15  # a healthy batch here writes every ~2 s (lease 5 s) or is redelivered in ≤ 2 s


async def test_a_job_survives_worker_restarts_that_lose_messages(api, site, stack) -> None:
    urls = [f"{site.url}/slow/heal-{n}?s=0.25&times=1" for n in range(2000)]
    job = await submit(api, {"urls": urls, "extract": PRODUCT_FIELDS})
    assert stack.worker is not None
    for _ in range(3):
        await asyncio.sleep(4)
        stack.worker.kill()  # SIGKILL mid-batch; pushes now get "connection refused"
        await asyncio.sleep(3)
        stack.start_worker()

    deadline = time.monotonic() + 240
    republished = 0
    while True:
        status = (await api.get(f"/v1/jobs/{job['id']}")).json()
        if status["status"] == "completed":
            break
        assert time.monotonic() < deadline, f"the job never completed: {status}"
        response = await api.post("/v1/maintenance/reconcile", params={"older_than_s": STALLED_S})
        assert response.status_code == 200, response.text
        republished += response.json()["batches"]
        await asyncio.sleep(3)

    results = await all_results(api, job["id"], page_size=500)
    assert sorted(r["url"] for r in results) == sorted(urls)  # one result per URL
    assert all(r["status"] == "succeeded" for r in results)
    assert status["counts"]["succeeded"] == 2000 and status["total"] == 2000
    assert republished > 0, "no message was lost: the test did not exercise reconcile"
