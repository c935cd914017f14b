"""The store a service's parts are given: its own store, whose settles' and closes' outcomes
(``Settled.stats``) go to the process's ``StatsBuffer`` once their commits landed. The
composition root wraps the store in it (one buffer a process), so no caller of ``settle`` can
leave its outcomes out of the statistics."""

from __future__ import annotations

from collections.abc import Collection, Sequence
from datetime import datetime
from typing import Any

from scrapejobs_shared.delivery.stats_buffer import StatsBuffer
from scrapejobs_shared.domain.records import TaskOutcome
from scrapejobs_shared.domain.statuses import TaskStatus
from scrapejobs_shared.domain.workers import WorkerBeat
from scrapejobs_shared.ports.batch_store import Busy, Missing, Settled, TaskChange
from scrapejobs_shared.ports.job_store import JobStore


class RecordedStore:
    """A ``JobStore``: every call is its store's; settles and closes also record outcomes."""

    def __init__(self, store: JobStore, stats: StatsBuffer) -> None:
        self._store = store
        self._stats = stats

    def __getattr__(self, name: str) -> Any:
        return getattr(self._store, name)

    async def settle(
        self,
        handle: object,
        changes: Sequence[TaskChange],
        now: datetime,
        lease_until: datetime | None = None,
        beat: WorkerBeat | None = None,
    ) -> Settled:
        settled = await self._store.settle(handle, changes, now, lease_until, beat)
        await self._record(settled, now)
        return settled

    async def close_batch(
        self,
        job_id: str,
        batch_id: str,
        outcome: TaskOutcome,
        now: datetime,
        statuses: Collection[TaskStatus] | None = None,
        spent_at: int | None = None,
    ) -> Settled | Busy | Missing:
        closed = await self._store.close_batch(job_id, batch_id, outcome, now, statuses, spent_at)
        if isinstance(closed, Settled):
            await self._record(closed, now)
        return closed

    async def _record(self, settled: Settled, now: datetime) -> None:
        await self._stats.record(settled.tenant, now, settled.stats, ends=settled.batch_closed)
