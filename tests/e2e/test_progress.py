"""Progress on the real stack: the ETA falls as a job over a slow site advances, is within a
factor of 2 of the real remaining time once 30% is done, and is 0 at completion."""

from __future__ import annotations

import asyncio
import time

import pytest

from support.jobs import submit

pytestmark = [pytest.mark.emulators, pytest.mark.stack]


async def test_eta_tracks_the_remaining_time(api, site) -> None:
    urls = [f"{site.url}/slow/eta-{n}?s=0.4&times=1" for n in range(60)]
    options = {"per_host_concurrency": 2}  # 5 pages a second: ~12 s
    job = await submit(api, {"urls": urls, "options": options})
    samples: list[tuple[float, float, float | None]] = []  # (time, percent, eta)
    deadline = time.monotonic() + 120
    while True:
        body = (await api.get(f"/v1/jobs/{job['id']}")).json()
        if body["status"] == "completed":
            finished = time.monotonic()
            break
        progress = body["progress"]
        samples.append((time.monotonic(), progress["percent"], progress["eta_s"]))
        assert time.monotonic() < deadline
        await asyncio.sleep(0.5)

    assert body["progress"]["percent"] == 100 and body["progress"]["eta_s"] == 0
    assert body["started_at"] and body["finished_at"] and body["progress"]["done"] == 60
    late = [(t, eta) for t, percent, eta in samples if percent >= 30 and eta is not None]
    assert late, samples
    for t, eta in late:
        remaining = finished - t
        assert remaining / 2 - 1.0 <= eta <= remaining * 2 + 1.0, (eta, remaining)
    assert late[-1][1] < late[0][1]  # it falls as the job advances
