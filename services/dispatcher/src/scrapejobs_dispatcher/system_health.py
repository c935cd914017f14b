"""System stats, hourly history and health, from the outcome totals the workers write with each
outcome (domain/outcome_stats.py) and from the jobs' counters: never from task documents.

Windows are whole slots: ``5m`` and ``1h`` cover the 5-minute slots that overlap the last 5
minutes or hour (so ``5m`` spans 5 to 10 minutes), ``24h`` the hours that overlap the last
day; ``since`` says where the span starts, and rates are per second of that span.
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field, replace
from datetime import datetime, timedelta
from enum import StrEnum
from typing import Any, Literal, TypeVar

from scrapejobs_shared.domain.clock import Clock
from scrapejobs_shared.domain.model_usage import ModelPrices
from scrapejobs_shared.domain.outcome_stats import HOUR, Totals, hour_of, slots_between
from scrapejobs_shared.domain.statuses import JobStatus, TaskStatus
from scrapejobs_shared.politeness.host_gate import HostGate, PausedHost
from scrapejobs_shared.politeness.host_key import origin_url
from scrapejobs_shared.ports.outcome_stats import OpenWork, StatsReader
from scrapejobs_shared.ports.recovery_queries import RecoveryQueries
from scrapejobs_shared.ports.task_publisher import TaskPublisher

Window = Literal["5m", "1h", "24h"]
WINDOWS: dict[str, timedelta] = {
    "5m": timedelta(minutes=5),
    "1h": timedelta(hours=1),
    "24h": timedelta(hours=24),
}
MAX_HISTORY_HOURS = 168
T = TypeVar("T")


@dataclass(frozen=True, slots=True)
class StatsReport:
    window: str
    since: datetime
    now: datetime
    totals: Totals
    jobs: dict[JobStatus, int]
    open: OpenWork
    paused: list[PausedHost]
    ai_prices: ModelPrices | None = None  # None: no cost is shown

    def without_hosts(self) -> StatsReport:
        """The report as a member sees it: the paused hosts (every tenant's sites) left out."""
        return replace(self, paused=[])

    @property
    def ai_cost(self) -> float | None:
        """What the window's model calls cost (None without prices)."""
        return None if self.ai_prices is None else self.ai_prices.cost_of(self.totals.ai)

    @property
    def throughput_per_s(self) -> float:
        seconds = max((self.now - self.since).total_seconds(), 1.0)
        return round(self.totals.processed / seconds, 3)

    @property
    def oldest_queued_age_s(self) -> float | None:
        since = self.open.oldest_queued_since
        return None if since is None else round((self.now - since).total_seconds(), 1)


@dataclass(frozen=True, slots=True)
class HourRow:
    hour: datetime
    totals: Totals
    seconds: float  # of the hour that has passed (3600 for a past hour)

    @property
    def success_rate(self) -> float | None:
        processed = self.totals.processed
        return round(self.totals.count(TaskStatus.SUCCEEDED) / processed, 4) if processed else None

    @property
    def throughput_per_s(self) -> float:
        return round(self.totals.processed / max(self.seconds, 1.0), 3)


class Level(StrEnum):
    HEALTHY = "HEALTHY"
    DEGRADED = "DEGRADED"
    UNHEALTHY = "UNHEALTHY"


_RANK = {Level.HEALTHY: 0, Level.DEGRADED: 1, Level.UNHEALTHY: 2}


@dataclass(frozen=True, slots=True)
class HealthPolicy:
    error_rate_degraded: float = 0.10  # of the tasks processed in the last 5 minutes
    error_rate_unhealthy: float = 0.50
    min_processed: int = 20  # fewer processed tasks than this say nothing about error rates
    backlog_target_s: float = 900.0  # oldest queued work older than this: DEGRADED (4x: UNHEALTHY)
    stuck_after_s: float = 240.0  # a batch nothing wrote for this long, unheld: work is stuck
    check_timeout_s: float = 3.0
    max_open_jobs: int = 500  # unfinished jobs whose counters a stats read sums


@dataclass(slots=True)
class Health:
    status: Level = Level.HEALTHY
    reasons: list[str] = field(default_factory=list)
    checks: dict[str, dict[str, Any]] = field(default_factory=dict)

    def for_member(self) -> Health:
        """What a member may see: every check, without the names of the hosts paused (other
        tenants' sites; an admin sees them)."""
        breakers = self.checks.get("breakers")
        if breakers is None or not breakers.get("open"):
            return self
        broken = len(breakers["open"])
        checks = self.checks | {"breakers": {"status": breakers["status"], "open": broken}}
        reasons = [
            f"circuit breaker open for {broken} host(s)" if r.startswith("circuit breaker") else r
            for r in self.reasons
        ]
        return Health(self.status, reasons, checks)

    def note(self, check: str, level: Level, reason: str | None, **facts: Any) -> None:
        self.checks[check] = {"status": level.value.lower(), **facts}
        if reason is not None and level is not Level.HEALTHY:
            self.reasons.append(reason)
        if _RANK[level] > _RANK[self.status]:
            self.status = level


@dataclass(eq=False)
class SystemHealth:
    totals: StatsReader  # the outcome totals and unfinished jobs' counts
    batches: RecoveryQueries
    gate: HostGate
    publisher: TaskPublisher
    clock: Clock
    policy: HealthPolicy
    ai_prices: ModelPrices | None = None  # the cost of the window's ai stages

    async def stats(self, window: Window, tenant: str | None = None) -> StatsReport:
        """The figures of ``window``: of one tenant's jobs, or every tenant's (None); the
        paused hosts are every tenant's (a host's pause holds for all)."""
        now = self.clock()
        since, totals = await self._window(window, now, tenant)
        jobs, open_work, paused = await asyncio.gather(
            self.totals.jobs_by_status(tenant),
            self.totals.open_work(self.policy.max_open_jobs, tenant),
            self.gate.paused(now, 100),
        )
        return StatsReport(window, since, now, totals, jobs, open_work, paused, self.ai_prices)

    async def _window(
        self, window: Window, now: datetime, tenant: str | None = None
    ) -> tuple[datetime, Totals]:
        start = now - WINDOWS[window]
        if window == "24h":
            hours = [hour_of(start) + HOUR * n for n in range(25)]
            by_hour = await self.totals.hour_totals([h for h in hours if h <= now], now, tenant)
            return hours[0], sum(by_hour.values(), Totals())
        slots = slots_between(start, now)
        by_slot = await self.totals.slot_totals(slots, now, tenant)
        return slots[0], sum(by_slot.values(), Totals())

    async def history(self, hours: int, tenant: str | None = None) -> list[HourRow]:
        now = self.clock()
        current = hour_of(now)
        starts = [current - HOUR * n for n in range(hours - 1, -1, -1)]
        by_hour = await self.totals.hour_totals(starts, now, tenant)
        return [
            HourRow(h, by_hour[h], min((now - h).total_seconds(), HOUR.total_seconds()))
            for h in starts
        ]

    async def health(self) -> Health:
        health, _ = await self.health_and_stats()
        return health

    async def health_and_stats(self) -> tuple[Health, StatsReport | None]:
        """Health, and the 5-minute report it was judged from (one read of the totals, the
        open work and the paused hosts serves both; None when it could not be read)."""
        health = Health()
        firestore_ok, _ = await asyncio.gather(
            self._reachable(health, "firestore", self.totals.ping),
            self._reachable(health, "pubsub", self.publisher.check),
        )
        judged = ("error_rate", "dead_letters", "backlog", "breakers")
        if not firestore_ok:
            for check in (*judged, "stuck_work"):
                health.checks[check] = {"status": "skipped", "why": "Firestore unreachable"}
            return health, None
        report, _ = await asyncio.gather(
            self._bounded(health, judged, self.stats("5m")),
            self._bounded(health, ("stuck_work",), self._check_stuck(health, self.clock())),
        )
        if report is not None:
            self._judge_outcomes(health, report.totals)
            self._judge_backlog(health, report)
            self._judge_breakers(health, report.paused)
        return health, report

    async def _reachable(
        self, health: Health, name: str, probe: Callable[[], Awaitable[None]]
    ) -> bool:
        label = {"firestore": "Firestore", "pubsub": "Pub/Sub"}[name]
        try:
            await asyncio.wait_for(probe(), self.policy.check_timeout_s)
        except Exception as exc:  # whatever the client raises: unreachable is the finding
            why = f"{type(exc).__name__}: {exc}".strip()[:300]
            health.note(name, Level.UNHEALTHY, f"{label} unreachable ({why})", error=why)
            return False
        health.note(name, Level.HEALTHY, None)
        return True

    async def _bounded(
        self, health: Health, names: tuple[str, ...], read: Awaitable[T]
    ) -> T | None:
        """``read`` within the check timeout; on failure every check of ``names`` is DEGRADED
        with the reason, and None is returned."""
        try:
            return await asyncio.wait_for(read, self.policy.check_timeout_s)
        except Exception as exc:
            why = f"{type(exc).__name__}: {exc}".strip()[:300]
            for name in names:
                health.note(name, Level.DEGRADED, f"{name} could not be checked ({why})", error=why)
            return None

    def _judge_outcomes(self, health: Health, totals: Totals) -> None:
        rate = totals.error_rate()
        policy = self.policy
        level = Level.HEALTHY
        if rate is not None and totals.processed >= policy.min_processed:
            if rate >= policy.error_rate_unhealthy:
                level = Level.UNHEALTHY
            elif rate >= policy.error_rate_degraded:
                level = Level.DEGRADED
        reason = f"error rate {rate:.0%} over the last 5 minutes" if rate is not None else None
        health.note("error_rate", level, reason, error_rate=rate, processed=totals.processed)
        dead = totals.count(TaskStatus.DEAD_LETTERED)
        health.note(
            "dead_letters",
            Level.DEGRADED if dead else Level.HEALTHY,
            f"{dead} task(s) dead-lettered in the last 5 minutes",
            count=dead,
        )

    def _judge_backlog(self, health: Health, report: StatsReport) -> None:
        target = self.policy.backlog_target_s
        age = report.oldest_queued_age_s
        level = Level.HEALTHY
        if age is not None and age > 4 * target:
            level = Level.UNHEALTHY
        elif age is not None and age > target:
            level = Level.DEGRADED
        reason = f"queued work waiting {age:.0f} s (target {target:.0f} s)" if age else None
        health.note(
            "backlog",
            level,
            reason,
            oldest_queued_age_s=age,
            target_s=target,
            queued=report.open.queued,
        )

    async def _check_stuck(self, health: Health, now: datetime) -> None:
        before = now - timedelta(seconds=self.policy.stuck_after_s)
        stuck = await self.batches.stalled_batches(before, now, 1)
        health.note(
            "stuck_work",
            Level.DEGRADED if stuck else Level.HEALTHY,
            f"work unchanged for over {self.policy.stuck_after_s:.0f} s and held by no worker "
            "(the reconcile sweep publishes it again)",
            stuck=bool(stuck),
        )

    def _judge_breakers(self, health: Health, paused: list[PausedHost]) -> None:
        broken = [origin_url(p.host) for p in paused if p.reason == "circuit_open"]
        health.note(
            "breakers",
            Level.DEGRADED if broken else Level.HEALTHY,
            f"circuit breaker open for {len(broken)} host(s): {', '.join(broken[:5])}",
            open=broken,
        )
