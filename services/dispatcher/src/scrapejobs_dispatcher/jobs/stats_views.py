"""JSON shapes of the monitoring API: /v1/stats, /v1/stats/history and /v1/health."""

from __future__ import annotations

from datetime import datetime
from typing import Any, Literal

from pydantic import BaseModel, Field

from scrapejobs_dispatcher.jobs.views import AiUsage
from scrapejobs_dispatcher.system_health import Health, HourRow, StatsReport
from scrapejobs_shared.domain.statuses import TaskStatus
from scrapejobs_shared.domain.workers import ProxyUse
from scrapejobs_shared.extraction.unusable_pages import Unusable
from scrapejobs_shared.politeness.host_key import origin_url


class TaskCounts(BaseModel):
    queued: int = Field(description="Queued now, in unfinished jobs")
    running: int = Field(description="Running now, in unfinished jobs")
    processing: int = Field(
        default=0, description="On the processing lane now (an ai stage), in unfinished jobs"
    )
    succeeded: int = Field(description="Finished in the window")
    failed: int = Field(description="Finished in the window")
    dead_lettered: int = Field(description="Finished in the window")
    cancelled: int = Field(description="Finished in the window")
    unusable: dict[str, int] = Field(
        default_factory=dict,
        description="Of the failed: pages that were a bot challenge, a login wall or showed "
        "nothing (challenge, login_wall, empty_content), finished in the window",
    )


class Timing(BaseModel):
    avg_ms: float | None
    p50_ms: float | None
    p95_ms: float | None


class FetchTiming(BaseModel):
    p95_ms: float | None


class PausedHostView(BaseModel):
    host: str = Field(description="The origin: scheme://host[:port]")
    until: datetime
    reason: Literal["circuit_open", "held"] = Field(
        description="circuit_open: the breaker; held: Retry-After or a slow pace"
    )


class ProxyEntry(BaseModel):
    proxy: str = Field(description="The proxy (scheme://host:port: never its credentials)")
    served: int = Field(description="Requests it carried since the process(es) started")
    failed: int = Field(description="Times it could not be reached or refused a tunnel")

    @classmethod
    def of(cls, use: ProxyUse) -> ProxyEntry:
        return cls(proxy=use.label, served=use.served, failed=use.failed)


class StatsView(BaseModel):
    window: str
    since: datetime = Field(description="Start of the span the window covers (whole slots)")
    generated_at: datetime = Field(description="End of the span: when the stats were read")
    tasks: TaskCounts
    jobs: dict[str, int] = Field(description="Jobs by status (all retained jobs)")
    throughput_per_s: float = Field(description="Tasks processed per second of the span")
    processing: Timing = Field(description="Service time per task: picked up to outcome")
    fetch: FetchTiming
    error_rate: float | None = Field(description="(failed + dead_lettered) / processed")
    oldest_queued_age_s: float | None = Field(
        description="Age of the oldest unfinished job that has queued tasks"
    )
    paused_hosts: list[PausedHostView]
    partial: bool = Field(
        description="More unfinished jobs than a stats read sums: queued/running are lower bounds"
    )
    ai: AiUsage = Field(
        description="What the ai stages of the tasks finished in the window used (and cost)"
    )
    proxied_pages: dict[str, int] = Field(
        default_factory=dict,
        description="Pages of the window that came through a proxy, by its tier (basic, stealth)",
    )
    proxies: list[ProxyEntry] = Field(
        default_factory=list,
        description="Admins: each proxy's counts summed over the worker processes heard from in "
        "the last 5 minutes, each since it started (per process: GET /v1/workers)",
    )

    @classmethod
    def of(cls, report: StatsReport) -> StatsView:
        totals = report.totals
        return cls(
            window=report.window,
            since=report.since,
            generated_at=report.now,
            tasks=TaskCounts(
                queued=report.open.queued,
                running=report.open.running,
                processing=report.open.processing,
                succeeded=totals.count(TaskStatus.SUCCEEDED),
                failed=totals.count(TaskStatus.FAILED),
                dead_lettered=totals.count(TaskStatus.DEAD_LETTERED),
                cancelled=totals.count(TaskStatus.CANCELLED),
                unusable={kind.value: totals.unusable_count(kind) for kind in Unusable},
            ),
            jobs={status.value: n for status, n in report.jobs.items()},
            throughput_per_s=report.throughput_per_s,
            processing=Timing(
                avg_ms=_round(totals.service.mean_ms()),
                p50_ms=totals.service.percentile_ms(0.5),
                p95_ms=totals.service.percentile_ms(0.95),
            ),
            fetch=FetchTiming(p95_ms=totals.fetch.percentile_ms(0.95)),
            error_rate=totals.error_rate(),
            oldest_queued_age_s=report.oldest_queued_age_s,
            paused_hosts=[
                PausedHostView(host=origin_url(p.host), until=p.until, reason=p.reason)
                for p in report.paused
            ],
            partial=report.open.partial,
            ai=AiUsage.of(totals.ai, report.ai_cost),
            proxied_pages=totals.metered.proxied(),
        )


class HourView(BaseModel):
    hour: datetime
    processed: int
    succeeded: int
    failed: int
    dead_lettered: int
    success_rate: float | None
    avg_ms: float | None
    p95_ms: float | None
    throughput_per_s: float

    @classmethod
    def of(cls, row: HourRow) -> HourView:
        totals = row.totals
        return cls(
            hour=row.hour,
            processed=totals.processed,
            succeeded=totals.count(TaskStatus.SUCCEEDED),
            failed=totals.count(TaskStatus.FAILED),
            dead_lettered=totals.count(TaskStatus.DEAD_LETTERED),
            success_rate=row.success_rate,
            avg_ms=_round(totals.service.mean_ms()),
            p95_ms=totals.service.percentile_ms(0.95),
            throughput_per_s=row.throughput_per_s,
        )


class HistoryView(BaseModel):
    history: list[HourView] = Field(description="One row per hour, oldest first")


class HealthView(BaseModel):
    status: Literal["HEALTHY", "DEGRADED", "UNHEALTHY"]
    reasons: list[str]
    checks: dict[str, dict[str, Any]]

    @classmethod
    def of(cls, health: Health) -> HealthView:
        return cls(status=health.status.value, reasons=health.reasons, checks=health.checks)


def _round(value: float | None) -> float | None:
    return None if value is None else round(value, 1)
