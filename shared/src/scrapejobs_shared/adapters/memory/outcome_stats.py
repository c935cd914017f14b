"""The memory twin's ``StatsReader`` and ``StatsWriter`` (ports/outcome_stats.py): what the
processes put (``put``) and the usage meter (``meter``: ports/usage_meter.py) added to the
outcome totals (every tenant's and each tenant's), and unfinished jobs' counts."""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime

from scrapejobs_shared.adapters.memory.store_state import MemoryStoreState
from scrapejobs_shared.domain.metered import Metered
from scrapejobs_shared.domain.outcome_stats import Totals, day_of, slots_of_hour
from scrapejobs_shared.domain.statuses import JobStatus, TaskStatus
from scrapejobs_shared.ports.outcome_stats import OpenWork, SourceTotals


class MemoryStatsReader:
    def __init__(self, state: MemoryStoreState) -> None:
        self._state = state

    async def meter(self, tenant: str, used: Metered, at: datetime) -> None:
        await self._state.ping()
        self._state.add_stats(tenant, at, Totals(metered=used))

    async def put(self, source: str, entries: Sequence[SourceTotals]) -> None:
        await self._state.ping()
        for entry in entries:
            self._state.put_stats(source, entry.tenant, entry.slot, entry.totals)

    def _slot(self, slot: datetime, tenant: str | None) -> Totals:
        if tenant is None:
            return self._state.stats.get(slot, Totals())
        return self._state.tenant_stats.get((tenant, slot), Totals())

    async def slot_totals(
        self, slots: Sequence[datetime], now: datetime, tenant: str | None = None
    ) -> dict[datetime, Totals]:
        await self._state.ping()
        return {slot: self._slot(slot, tenant) for slot in slots}

    async def hour_totals(
        self, hours: Sequence[datetime], now: datetime, tenant: str | None = None
    ) -> dict[datetime, Totals]:
        await self._state.ping()
        return {
            hour: sum((self._slot(s, tenant) for s in slots_of_hour(hour)), Totals())
            for hour in hours
        }

    async def day_totals(
        self, days: Sequence[datetime], now: datetime, tenant: str | None = None
    ) -> dict[datetime, Totals]:
        await self._state.ping()
        by_day: dict[datetime, Totals] = {}
        slots = (
            self._state.stats
            if tenant is None
            else {
                slot: totals
                for (owner, slot), totals in self._state.tenant_stats.items()
                if owner == tenant
            }
        )
        for slot, totals in slots.items():
            by_day[day_of(slot)] = by_day.get(day_of(slot), Totals()) + totals
        return {day: by_day.get(day, Totals()) for day in days}

    async def jobs_by_status(self, tenant: str | None = None) -> dict[JobStatus, int]:
        await self._state.ping()
        counts = dict.fromkeys(JobStatus, 0)
        for job in self._state.jobs.values():
            if tenant is None or job.tenant == tenant:
                counts[job.status] += 1
        return counts

    async def open_work(self, max_jobs: int, tenant: str | None = None) -> OpenWork:
        await self._state.ping()
        active = [
            j
            for j in self._state.jobs.values()
            if not j.status.terminal and (tenant is None or j.tenant == tenant)
        ][: max_jobs + 1]
        queued = running = processing = 0
        oldest: datetime | None = None
        for job in active[:max_jobs]:
            counts = self._state.counts(job.id)
            queued += counts[TaskStatus.QUEUED]
            running += counts[TaskStatus.RUNNING]
            processing += counts[TaskStatus.PROCESSING]
            if counts[TaskStatus.QUEUED]:
                oldest = job.created_at if oldest is None else min(oldest, job.created_at)
        partial = len(active) > max_jobs
        return OpenWork(queued, running, oldest, len(active[:max_jobs]), partial, processing)
