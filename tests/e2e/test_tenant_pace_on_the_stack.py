"""A job's pace is the job's, on the stack: one tenant's job at the slowest pace allowed (one
request a host every 100 s) beside another tenant's one-URL jobs of the same host. Theirs
finish while the slow job has fetched its first page and waits; the host's shared document
never carries the slow job's pace."""

from __future__ import annotations

import asyncio
import random
from datetime import UTC, datetime, timedelta

import pytest

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
