"""The worker's reports for the workers view: spaced out, exact (a failed commit gives its
counts back), what no commit carried reported on its own, an idle process still heard from."""

from __future__ import annotations

import asyncio

from scrapejobs_shared.adapters.memory.job_store import MemoryJobStore
from scrapejobs_shared.domain.clock import utc_now
from scrapejobs_shared.domain.workers import WorkerBeat
from scrapejobs_worker.batches.worker_heartbeat import WorkerHeartbeat


async def test_reports_are_spaced_and_their_counts_exact() -> None:
    store = MemoryJobStore()
    heartbeat = WorkerHeartbeat(store, utc_now, "rev-7", every_s=60)
    await heartbeat.report_now()  # at start: listed before any work
    heartbeat.finished(pages=5, batches=1)
    assert heartbeat.take() is None  # too soon after the last report
    heartbeat.restore(WorkerBeat(heartbeat.worker_id, "rev-7", utc_now(), utc_now(), 0, 2))
    beat = heartbeat.take()  # a failed commit makes the next one due at once
    assert beat is not None and (beat.batches, beat.pages) == (1, 7)
    heartbeat.restore(beat)  # that commit failed too
    await heartbeat.report_now()
    [view] = store.workers.values()
    assert (view.batches, view.pages, view.revision) == (1, 7, "rev-7")


async def test_what_no_commit_carried_is_reported_by_the_loop() -> None:
    store = MemoryJobStore()
    heartbeat = WorkerHeartbeat(store, utc_now, "local", every_s=0.05, alive_every_s=0.3)
    running = asyncio.create_task(heartbeat.run())
    try:
        heartbeat.batches_in_flight = 1
        heartbeat.finished(pages=3)
        await asyncio.sleep(0.2)
        [view] = store.workers.values()
        assert view.pages == 3 and view.batches_in_flight == 1
        heartbeat.batches_in_flight = 0
        await asyncio.sleep(0.2)
        first_seen = store.workers[heartbeat.worker_id].last_seen
        assert store.workers[heartbeat.worker_id].batches_in_flight == 0
        await asyncio.sleep(0.5)  # idle: still heard from now and then
        assert store.workers[heartbeat.worker_id].last_seen > first_seen
        assert store.workers[heartbeat.worker_id].pages == 3  # nothing counted twice
    finally:
        running.cancel()


def test_every_process_has_its_own_id() -> None:
    store = MemoryJobStore()
    ids = {WorkerHeartbeat(store, utc_now, "local").worker_id for _ in range(50)}
    assert len(ids) == 50
