"""The StatsReader port of the memory twin: what ``MemoryJobStore``'s settles added to its
outcome totals (every tenant's and each tenant's), and its unfinished jobs' counts."""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime

from scrapejobs_shared.domain.outcome_stats import Totals, day_of, slots_of_hour
from scrapejobs_shared.domain.records import JobRecord
from scrapejobs_shared.domain.statuses import JobStatus, TaskStatus
from scrapejobs_shared.ports.outcome_stats import OpenWork


class MemoryStatsReader:
    """Mixed into ``MemoryJobStore``, whose state it reads."""

    jobs: dict[str, JobRecord]
    stats: dict[datetime, Totals]  # outcome totals by 5-minute slot
    tenant_stats: dict[tuple[str, datetime], Totals]  # the same, per tenant

    async def ping(self) -> None:
        raise NotImplementedError

    async def count_tasks(self, job_id: str) -> dict[TaskStatus, int]:
        raise NotImplementedError

    def _slot(self, slot: datetime, tenant: str | None) -> Totals:
        if tenant is None:
            return self.stats.get(slot, Totals())
        return self.tenant_stats.get((tenant, slot), Totals())

    async def slot_totals(
        self, slots: Sequence[datetime], now: datetime, tenant: str | None = None
    ) -> dict[datetime, Totals]:
        await self.ping()
        return {slot: self._slot(slot, tenant) for slot in slots}

    async def hour_totals(
        self, hours: Sequence[datetime], now: datetime, tenant: str | None = None
    ) -> dict[datetime, Totals]:
        await self.ping()
        return {
            hour: sum((self._slot(s, tenant) for s in slots_of_hour(hour)), Totals())
            for hour in hours
        }

    async def day_totals(
        self, days: Sequence[datetime], now: datetime, tenant: str | None = None
    ) -> dict[datetime, Totals]:
        await self.ping()
        by_day: dict[datetime, Totals] = {}
        slots = (
            self.stats
            if tenant is None
            else {
                slot: totals
                for (owner, slot), totals in self.tenant_stats.items()
                if owner == tenant
            }
        )
        for slot, totals in slots.items():
            by_day[day_of(slot)] = by_day.get(day_of(slot), Totals()) + totals
        return {day: by_day.get(day, Totals()) for day in days}

    async def jobs_by_status(self, tenant: str | None = None) -> dict[JobStatus, int]:
        await self.ping()
        counts = dict.fromkeys(JobStatus, 0)
        for job in self.jobs.values():
            if tenant is None or job.tenant == tenant:
                counts[job.status] += 1
        return counts

    async def open_work(self, max_jobs: int, tenant: str | None = None) -> OpenWork:
        await self.ping()
        active = [
            j
            for j in self.jobs.values()
            if not j.status.terminal and (tenant is None or j.tenant == tenant)
        ][: max_jobs + 1]
        queued = running = processing = 0
        oldest: datetime | None = None
        for job in active[:max_jobs]:
            counts = await self.count_tasks(job.id)
            queued += counts[TaskStatus.QUEUED]
            running += counts[TaskStatus.RUNNING]
            processing += counts[TaskStatus.PROCESSING]
            if counts[TaskStatus.QUEUED]:
                oldest = job.created_at if oldest is None else min(oldest, job.created_at)
        partial = len(active) > max_jobs
        return OpenWork(queued, running, oldest, len(active[:max_jobs]), partial, processing)
