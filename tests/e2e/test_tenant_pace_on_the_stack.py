"""A job's pace is the job's, on the stack: one tenant's job at the slowest pace allowed (one
request a host every 100 s) beside another tenant's one-URL jobs of the same host. Theirs
finish while the slow job has fetched its first page and waits; the host's shared document
never carries the slow job's pace."""

from __future__ import annotations

import asyncio
import itertools
import random
from datetime import UTC, datetime, timedelta

import pytest
from google.cloud import firestore

from support.jobs import submit, wait_finished

pytestmark = [pytest.mark.emulators, pytest.mark.stack]


async def test_a_slow_job_paces_only_its_own_pages(api, site) -> None:
    first = 700_000_000 + random.randrange(10**6) * 10
    slow_paths = [f"/product/{first + n}" for n in range(4)]
    slow = await submit(
        api,
        {
            "urls": [f"{site.url}{path}" for path in slow_paths],
            "options": {"per_host_rps": 0.01},  # one request every 100 s, for this job
        },
    )
    assert (await api.get(f"/v1/jobs/{slow['id']}")).json()["tenant"] == "default"
    theirs = []
    for n in range(5):
        path = f"/product/{first + 100 + n}"
        made = await api.post(
            "/v1/jobs", params={"tenant": "other-team"}, json={"url": f"{site.url}{path}"}
        )
        assert made.status_code == 202, made.text
        theirs.append(made.json()["id"])
    done = await asyncio.gather(*(wait_finished(api, job_id, timeout_s=60) for job_id in theirs))
    assert all(job["counts"]["succeeded"] == 1 for job in done)
    # meanwhile the slow job fetched its first page at most, and waits for its own pace
    fetched = sum(site.count(path) for path in slow_paths)
    assert fetched <= 1, fetched
    state = (await api.get("/v1/hosts", params={"url": site.url})).json()
    shared = state["next_request_at"]  # the host's own pace: not the slow job's 100 s
    soon = datetime.now(UTC) + timedelta(seconds=10)
    assert shared is None or datetime.fromisoformat(shared) < soon, state
    cancelled = await api.post(f"/v1/jobs/{slow['id']}:cancel")
    assert cancelled.status_code == 200


async def test_a_slow_pace_waits_unpublished_between_its_pages(api, site, stack) -> None:
    """Between two of its pages a job at a slow pace (one request every 12.5 s) holds no push
    and makes no delivery: its batch waits, stored and not active, and is published when its
    next request may start; its pages keep the pace, and the job ends."""
    first = 750_000_000 + random.randrange(10**6) * 10
    paths = [f"/product/{first + n}" for n in range(3)]
    body = {"urls": [f"{site.url}{path}" for path in paths], "options": {"per_host_rps": 0.08}}
    job = await submit(api, body)
    client = firestore.AsyncClient(project=stack.config.project_id)
    try:
        deadline = asyncio.get_running_loop().time() + 20
        waiting = None
        while waiting is None and asyncio.get_running_loop().time() < deadline:
            waiting = await waiting_until(client, job["id"])
            await asyncio.sleep(0.2)
        assert waiting is not None  # its batch waits for its time, unpublished
        assert datetime.now(UTC) < waiting <= datetime.now(UTC) + timedelta(seconds=13)
    finally:
        client.close()
    done = await wait_finished(api, job["id"], timeout_s=90)
    assert done["counts"]["succeeded"] == 3
    starts = sorted(t for path in paths for t in site.times[path])
    assert all(later - earlier >= 12 for earlier, later in itertools.pairwise(starts)), starts
    deliveries = [
        line
        for log in stack.config.log_dir.glob("worker*.log")
        for line in log.read_text(errors="replace").splitlines()
        if job["id"] in line and "batch processed" in line
    ]
    assert len(deliveries) <= len(paths) + 1, len(deliveries)  # a delivery a page, not a wait


async def waiting_until(client: firestore.AsyncClient, job_id: str) -> datetime | None:
    """When the job's batch (its document's, or a batch document) waits until, if it does."""
    job = (await client.collection("jobs").document(job_id).get()).to_dict() or {}
    if isinstance(job.get("b"), dict):
        return job["b"].get("wait_until")
    async for batch in client.collection("jobs").document(job_id).collection("batches").stream():
        if (batch.to_dict() or {}).get("wait_until") is not None:
            return batch.get("wait_until")
    return None
