"""The stats port: outcome totals by 5-minute slot and by hour, and what is open right now.

Totals are gathered by each process from its settles (``Settled.stats``) and written by its
``StatsBuffer`` (delivery/stats_buffer.py) through ``StatsWriter``: each process sets its own
document of a tenant's slot, at most once every ``stats_every_s``. ``StatsReader`` sums them, so
a stats read costs O(slots or hours x processes), never O(tasks).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Protocol

from scrapejobs_shared.domain.outcome_stats import Totals
from scrapejobs_shared.domain.statuses import JobStatus


@dataclass(frozen=True, slots=True)
class OpenWork:
    """Tasks of unfinished jobs that are queued, running or processing now (from the jobs'
    counters)."""

    queued: int
    running: int
    oldest_queued_since: datetime | None  # creation of the oldest job that has queued tasks
    jobs_read: int  # unfinished jobs whose counters were read
    partial: bool  # more unfinished jobs than the read's bound: the counts are a lower bound
    processing: int = 0  # handed to the processing lane (an ai stage)


@dataclass(frozen=True, slots=True)
class SourceTotals:
    """What one process (a source) has recorded so far for one tenant's 5-minute slot."""

    slot: datetime
    tenant: str
    totals: Totals


class StatsWriter(Protocol):
    async def put(self, source: str, entries: Sequence[SourceTotals]) -> None:
        """Set (never add) ``source``'s totals of each entry's tenant and slot: a put sent
        again, or one whose answer was lost, leaves the same figures. Raises when it could not
        be written (the caller keeps the totals to put again)."""


class StatsReader(Protocol):
    async def slot_totals(
        self, slots: Sequence[datetime], now: datetime, tenant: str | None = None
    ) -> dict[datetime, Totals]:
        """Totals of each 5-minute slot (starts from ``domain.stats.slot_of``), of one tenant's
        jobs (None: every tenant's)."""

    async def hour_totals(
        self, hours: Sequence[datetime], now: datetime, tenant: str | None = None
    ) -> dict[datetime, Totals]:
        """Totals of each hour (starts from ``domain.stats.hour_of``)."""

    async def day_totals(
        self, days: Sequence[datetime], now: datetime, tenant: str | None = None
    ) -> dict[datetime, Totals]:
        """Totals of each UTC day (starts from ``domain.outcome_stats.day_of``); a day's
        totals outlive its slots and hours (usage history), once a read summed them."""

    async def jobs_by_status(self, tenant: str | None = None) -> dict[JobStatus, int]: ...

    async def open_work(self, max_jobs: int, tenant: str | None = None) -> OpenWork: ...

    async def ping(self) -> None:
        """Raise if the store cannot be reached."""
