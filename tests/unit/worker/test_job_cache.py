"""A worker reads a job once per process, even when its first batches arrive together, and a
job it cannot mark running still runs."""

from __future__ import annotations

import asyncio
from datetime import UTC, datetime

from scrapejobs_shared.adapters.memory.job_store import MemoryJobStore
from scrapejobs_shared.domain.statuses import JobStatus
from scrapejobs_worker.batches.job_cache import JobCache
from support.worker_fakes import NOW, setup_job


class SlowStore(MemoryJobStore):
    def __init__(self, fail_moves: bool = False) -> None:
        super().__init__()
        self.reads = 0
        self.moves = 0
        self.fail_moves = fail_moves

    async def get_job(self, job_id):
        self.reads += 1
        await asyncio.sleep(0.01)
        return await super().get_job(job_id)

    async def set_job_status(self, job_id, status, now):
        self.moves += 1
        if self.fail_moves:
            raise ConnectionError("store unavailable")
        return await super().set_job_status(job_id, status, now)


async def test_concurrent_lookups_share_one_read_and_one_move() -> None:
    store = SlowStore()
    await setup_job(store)
    cache = JobCache(store, lambda: datetime.now(UTC))
    specs = await asyncio.gather(*(cache.spec("j") for _ in range(5)))
    assert all(spec is specs[0] for spec in specs) and specs[0] is not None
    assert store.reads == 1 and store.moves == 1
    assert store.jobs["j"].status is JobStatus.RUNNING
    await cache.spec("j")
    assert store.reads == 1  # cached


async def test_a_job_that_cannot_be_marked_running_still_runs() -> None:
    store = SlowStore(fail_moves=True)
    await setup_job(store)
    assert await JobCache(store, lambda: NOW).spec("j") is not None


async def test_an_unknown_job_is_none() -> None:
    assert await JobCache(SlowStore(), lambda: NOW).spec("nope") is None
