"""What the deployment has used and has left, in Firecrawl's terms (its SDK's queue, concurrency,
credit and token calls): figures from the outcome totals the workers write with each outcome
and from the jobs' counters, never from task documents.

* A **credit** is a page fetched: a task that ended with a response from its site (whatever its
  status code). A page reused from the page cache, a fetch that never got a response (a refused
  destination, a timeout) and a retried attempt cost nothing; a page that turned out to be a
  bot challenge, a login wall or an empty shell is not charged either (it is no success).
* **Tokens** are what the ``ai`` stages' model calls used, in and out (the provider's figures).
* A **billing period** is a calendar month (UTC); the plan (``SCRAPEJOBS_PLAN_CREDITS``,
  ``SCRAPEJOBS_PLAN_TOKENS``) is what a period may use, and what is left is the plan less what
  the period used (never below 0).
* **Concurrency** is pages being fetched or processed now, across every worker, against the
  most the deployment runs at once (``SCRAPEJOBS_MAX_CONCURRENCY``: Terraform sets worker
  instances x pushes per instance x pages per push).
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime

from scrapejobs_shared.domain.clock import Clock
from scrapejobs_shared.domain.outcome_stats import (
    DAY,
    HOUR,
    SLOT,
    Totals,
    day_of,
    hour_of,
    slots_between,
)
from scrapejobs_shared.domain.statuses import TaskStatus
from scrapejobs_shared.ports.outcome_stats import StatsReader

MAX_OPEN_JOBS = 500  # unfinished jobs whose counters a queue read sums (as the stats do)
MAX_PERIODS = 12  # the usage history goes back this many billing periods


@dataclass(frozen=True, slots=True)
class Plan:
    credits: int  # pages a billing period may fetch
    tokens: int  # model tokens a billing period may use
    max_concurrency: int  # pages at once, across the deployment


@dataclass(frozen=True, slots=True)
class PeriodUsage:
    start: datetime
    end: datetime  # exclusive: the next period's start
    credits: int
    tokens: int


@dataclass(frozen=True, slots=True)
class QueueFigures:
    queued: int  # pages waiting in unfinished jobs
    active: int  # pages being fetched or processed now
    max_concurrency: int
    most_recent_success: datetime | None  # see Usage._last_success
    partial: bool  # more unfinished jobs than a read sums: lower bounds


def credits_of(totals: Totals) -> int:
    """Pages fetched (see the module's docstring)."""
    return totals.credits


def tokens_of(totals: Totals) -> int:
    return totals.ai.input_tokens + totals.ai.output_tokens


def period_of(moment: datetime) -> tuple[datetime, datetime]:
    """The billing period (calendar month, UTC) holding ``moment``."""
    start = day_of(moment).replace(day=1)
    return start, _next_month(start)


def _next_month(start: datetime) -> datetime:
    if start.month == 12:
        return start.replace(year=start.year + 1, month=1)
    return start.replace(month=start.month + 1)


def _previous_month(start: datetime) -> datetime:
    if start.month == 1:
        return start.replace(year=start.year - 1, month=12)
    return start.replace(month=start.month - 1)


def _days(start: datetime, end: datetime) -> list[datetime]:
    days, day = [], start
    while day < end:
        days.append(day)
        day += DAY
    return days


class Usage:
    def __init__(self, stats: StatsReader, clock: Clock, plan: Plan) -> None:
        self._stats = stats
        self._clock = clock
        self.plan = plan

    async def current(self, tenant: str | None = None) -> PeriodUsage:
        """The billing period under way, up to now (of one tenant, or every tenant's)."""
        [period] = await self.history(1, tenant)
        return period

    async def history(
        self, periods: int = MAX_PERIODS, tenant: str | None = None
    ) -> list[PeriodUsage]:
        """The last ``periods`` billing periods, the current one first."""
        now = self._clock()
        starts = [period_of(now)[0]]
        while len(starts) < max(1, min(periods, MAX_PERIODS)):
            starts.append(_previous_month(starts[-1]))
        days = [d for start in starts for d in _days(start, min(_next_month(start), now))]
        by_day = await self._stats.day_totals(days, now, tenant)
        usage = []
        for start in starts:
            end = _next_month(start)
            totals = sum((by_day[d] for d in _days(start, min(end, now))), Totals())
            usage.append(PeriodUsage(start, end, credits_of(totals), tokens_of(totals)))
        return usage

    async def queue(self, tenant: str | None = None) -> QueueFigures:
        now = self._clock()
        open_work = await self._stats.open_work(MAX_OPEN_JOBS, tenant)
        return QueueFigures(
            queued=open_work.queued,
            active=open_work.running + open_work.processing,
            max_concurrency=self.plan.max_concurrency,
            most_recent_success=await self._last_success(now, tenant),
            partial=open_work.partial,
        )

    async def active(self, tenant: str | None = None) -> int:
        """Pages being fetched or processed now (a lower bound past ``MAX_OPEN_JOBS`` jobs)."""
        open_work = await self._stats.open_work(MAX_OPEN_JOBS, tenant)
        return open_work.running + open_work.processing

    async def _last_success(self, now: datetime, tenant: str | None) -> datetime | None:
        """When a page last succeeded, to the end of its 5-minute slot within this hour, to the
        end of its hour within the last day (capped at now); None before that."""
        slots = slots_between(hour_of(now), now)
        by_slot = await self._stats.slot_totals(slots, now, tenant)
        for slot in reversed(slots):
            if by_slot[slot].count(TaskStatus.SUCCEEDED):
                return min(slot + SLOT, now)
        hours = [hour_of(now) - HOUR * n for n in range(1, 24)]
        by_hour = await self._stats.hour_totals(hours, now, tenant)
        for hour in hours:
            if by_hour[hour].count(TaskStatus.SUCCEEDED):
                return hour + HOUR
        return None

    async def roll_up(self) -> int:
        """Sum the days this period and the last one kept apart (the daily maintenance call,
        so a day's usage outlives its hourly figures); the days read."""
        now = self._clock()
        start = _previous_month(period_of(now)[0])
        days = _days(start, day_of(now))
        await self._stats.day_totals(days, now)
        return len(days)
