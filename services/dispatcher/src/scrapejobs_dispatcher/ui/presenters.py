"""What the dashboard shows, computed from the service objects' records: plain values and text a
template prints as it is (no arithmetic or formatting in templates). Pure: no I/O, no clock."""

from __future__ import annotations

import json
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from scrapejobs_dispatcher.jobs.job_service import JobView
from scrapejobs_dispatcher.system_health import Health, HourRow, StatsReport
from scrapejobs_shared.domain.model_usage import ModelUsage
from scrapejobs_shared.domain.records import TaskRecord
from scrapejobs_shared.domain.statuses import TaskStatus
from scrapejobs_shared.domain.workers import WorkerView
from scrapejobs_shared.extraction.unusable_pages import Unusable
from scrapejobs_shared.options import RENDER
from scrapejobs_shared.options.render import RenderOptions
from scrapejobs_shared.politeness.host_gate import PausedHost
from scrapejobs_shared.politeness.host_key import origin_url
from scrapejobs_shared.ports.file_store import FILE_NAME

DASH = "—"
PREVIEW_CHARS = 300
PAGES_SHOWN = 50  # a document's pages previewed on its job's page
PAGE_PREVIEW_CHARS = 160


def duration_text(seconds: float | None) -> str:
    """A duration for a person: ``—`` (unknown), ``<1 s``, ``42 s``, ``3 min 5 s``,
    ``2 h 10 min``, ``3 d 4 h``; the two largest units, rounded down."""
    if seconds is None:
        return DASH
    whole = int(seconds)
    if whole < 1:
        return "<1 s"
    days, rest = divmod(whole, 86_400)
    hours, rest = divmod(rest, 3600)
    minutes, secs = divmod(rest, 60)
    units = [(days, "d"), (hours, "h"), (minutes, "min"), (secs, "s")]
    first = next(i for i, (n, _) in enumerate(units) if n)
    shown = [f"{n} {unit}" for n, unit in units[first : first + 2] if n]
    return " ".join(shown)


def relative_text(moment: datetime | None, now: datetime) -> str:
    """``12 s ago`` or ``in 3 min``; ``—`` when there is no moment."""
    if moment is None:
        return DASH
    seconds = (now - moment).total_seconds()
    if abs(seconds) < 1:
        return "now"
    if seconds > 0:
        return f"{duration_text(seconds)} ago"
    return f"in {duration_text(-seconds)}"


def percent_text(fraction: float | None) -> str:
    """0.0312 → ``3.1%``; ``—`` when there is no rate (nothing processed)."""
    return DASH if fraction is None else f"{fraction * 100:.1f}%"


def rate_text(per_s: float | None) -> str:
    if per_s is None:
        return DASH
    if per_s >= 10:
        return f"{per_s:.0f}/s"
    return f"{per_s:.2f}/s"


@dataclass(frozen=True, slots=True)
class JobRow:
    """A job with its progress, as the jobs list and the job page show it."""

    id: str
    status: str
    kind: str
    labels: str
    created: str
    done: int
    total: int
    percent: int  # whole percent, for the progress bar
    percent_label: str
    rate: str
    eta: str
    finished: bool
    rendering: str  # how its pages are rendered ("" when they are not)
    ai_usage: str = ""  # what its ai stage cost ("" when it has none yet)
    tenant: str = ""

    @classmethod
    def of(cls, view: JobView, now: datetime) -> JobRow:
        job, progress = view.job, view.progress
        finished = job.status.terminal and progress.done == progress.total
        if finished:
            eta = "finished"
        elif progress.eta_s is None:
            eta = "estimating…"
        else:
            eta = duration_text(progress.eta_s)
        return cls(
            id=job.id,
            tenant=job.tenant,
            status=job.status.value,
            kind=job.kind,
            labels=", ".join(f"{k}={v}" for k, v in sorted(job.labels.items())),
            created=relative_text(job.created_at, now),
            done=progress.done,
            total=progress.total,
            percent=int(progress.percent),
            percent_label=f"{progress.percent:.0f}%",
            rate=rate_text(progress.rate_per_s),
            eta=eta,
            finished=finished,
            rendering=rendering_text(RENDER.of(job.spec.options)),
            ai_usage=usage_text(job.ai_usage, view.ai_cost),
        )


def usage_text(usage: ModelUsage | None, cost: float | None = None) -> str:
    """``12 model calls, 3 reused; 40,210 tokens in, 1,502 out; cost 0.0421``; empty without
    usage (the cost only when prices are set)."""
    if usage is None:
        return ""
    return f"{calls_text(usage)}; {tokens_text(usage)}" + (
        "" if cost is None else f"; cost {cost_text(cost)}"
    )


def calls_text(usage: ModelUsage) -> str:
    """``12 model calls, 3 reused``."""
    return f"{usage.calls:,} model call{'' if usage.calls == 1 else 's'}, {usage.cached:,} reused"


def tokens_text(usage: ModelUsage) -> str:
    """``40,210 tokens in, 1,502 out``."""
    return f"{usage.input_tokens:,} tokens in, {usage.output_tokens:,} out"


def cost_text(cost: float) -> str:
    """A cost in the prices' own currency: ``0.0421``, ``12.35``, ``1,204``."""
    if cost >= 1000:
        return f"{cost:,.0f}"
    return f"{cost:.2f}" if cost >= 1 else f"{cost:.4g}"


def rendering_text(render: RenderOptions | None) -> str:
    """``headless Chromium, wait for h1.title, +500 ms``; empty for a job not rendered."""
    if render is None:
        return ""
    waits = [f"wait for {render.wait_for}"] if render.wait_for else []
    waits += [f"+{render.wait_ms} ms"] if render.wait_ms else []
    return ", ".join(["headless Chromium", *waits])


@dataclass(frozen=True, slots=True)
class Count:
    status: str
    label: str
    n: int


def count_list(counts: dict[TaskStatus, int]) -> list[Count]:
    """Every task status in the order a task moves through them, with a readable label."""
    order = [
        TaskStatus.QUEUED,
        TaskStatus.RUNNING,
        TaskStatus.PROCESSING,
        TaskStatus.SUCCEEDED,
        TaskStatus.FAILED,
        TaskStatus.DEAD_LETTERED,
        TaskStatus.CANCELLED,
    ]
    return [Count(s.value, s.value.replace("_", " "), counts.get(s, 0)) for s in order]


@dataclass(frozen=True, slots=True)
class Tile:
    """One live figure on the home page."""

    label: str
    value: str
    note: str


def live_tiles(report: StatsReport) -> list[Tile]:
    """Throughput, backlog (queued / running now) and error rate of the 5-minute window."""
    totals = report.totals
    queued = f"{report.open.queued}{'+' if report.open.partial else ''}"
    oldest = report.oldest_queued_age_s
    return [
        Tile(
            "Throughput",
            rate_text(report.throughput_per_s),
            f"{totals.processed} task{'' if totals.processed == 1 else 's'} "
            f"since {report.since:%H:%M} UTC",
        ),
        Tile(
            "Backlog",
            f"{queued} queued · {report.open.running} running",
            "oldest queued " + (f"{duration_text(oldest)} ago" if oldest is not None else DASH),
        ),
        Tile(
            "Error rate",
            percent_text(totals.error_rate()),
            f"{totals.count(TaskStatus.FAILED)} failed, "
            f"{totals.count(TaskStatus.DEAD_LETTERED)} dead-lettered",
        ),
        *_unusable_tile(report),
        *_ai_tile(report),
    ]


def _unusable_tile(report: StatsReport) -> list[Tile]:
    """Pages that answered with a challenge, a login wall or nothing, when the window has some
    (failed pages counted apart: docs/semantics.md)."""
    totals = report.totals
    if not totals.unbilled:
        return []
    parts = [
        f"{totals.unusable_count(kind)} {kind.value.replace('_', ' ')}"
        for kind in Unusable
        if totals.unusable_count(kind)
    ]
    return [
        Tile(
            "Not the page",
            f"{totals.unbilled} page{'' if totals.unbilled == 1 else 's'}",
            ", ".join(parts),
        )
    ]


def _ai_tile(report: StatsReport) -> list[Tile]:
    """The ai stages' model calls and cost, when the window has some or prices are set."""
    usage, cost = report.totals.ai, report.ai_cost
    if usage.empty and cost is None:
        return []
    value = calls_text(usage) if cost is None else f"cost {cost_text(cost)}"
    note = tokens_text(usage) if cost is None else f"{calls_text(usage)}; {tokens_text(usage)}"
    return [Tile("AI stage", value, note)]


@dataclass(frozen=True, slots=True)
class Check:
    name: str
    status: str
    facts: str


@dataclass(frozen=True, slots=True)
class HealthPanel:
    status: str  # HEALTHY | DEGRADED | UNHEALTHY
    reasons: list[str]
    checks: list[Check]


def health_panel(health: Health) -> HealthPanel:
    checks = []
    for name, facts in health.checks.items():
        status = str(facts.get("status", "unknown"))
        shown = ", ".join(
            f"{k.replace('_', ' ')}: {_fact(v)}" for k, v in facts.items() if k != "status"
        )
        checks.append(Check(name.replace("_", " "), status, shown))
    return HealthPanel(health.status.value, list(health.reasons), checks)


def _fact(value: Any) -> str:
    if value is None:
        return DASH
    if isinstance(value, list):
        return ", ".join(str(v) for v in value) or "none"
    if isinstance(value, float):
        return f"{value:g}"
    return str(value)


def history_series(rows: list[HourRow]) -> dict[str, list[float | None]]:
    """Columns for the charts (uPlot's layout: x first): hour starts as Unix seconds, tasks
    processed per hour by outcome, and the hour's error rate in percent (null when idle)."""
    series: dict[str, list[float | None]] = {
        "hour": [],
        "processed": [],
        "succeeded": [],
        "failed": [],
        "dead_lettered": [],
        "error_rate": [],
    }
    for row in rows:
        totals = row.totals
        rate = totals.error_rate()
        series["hour"].append(row.hour.timestamp())
        series["processed"].append(totals.processed)
        series["succeeded"].append(totals.count(TaskStatus.SUCCEEDED))
        series["failed"].append(totals.count(TaskStatus.FAILED))
        series["dead_lettered"].append(totals.count(TaskStatus.DEAD_LETTERED))
        series["error_rate"].append(None if rate is None else round(rate * 100, 2))
    return series


@dataclass(frozen=True, slots=True)
class HourLine:
    """One row of the history table (the charts' text alternative)."""

    hour: str
    processed: int
    succeeded: int
    failed: int
    dead_lettered: int
    error_rate: str


def history_lines(rows: list[HourRow]) -> list[HourLine]:
    """The history, newest hour first, hours with no work left out."""
    return [
        HourLine(
            f"{row.hour:%d %b %H:%M}",
            row.totals.processed,
            row.totals.count(TaskStatus.SUCCEEDED),
            row.totals.count(TaskStatus.FAILED),
            row.totals.count(TaskStatus.DEAD_LETTERED),
            percent_text(row.totals.error_rate()),
        )
        for row in reversed(rows)
        if row.totals.processed
    ]


@dataclass(frozen=True, slots=True)
class PagePreview:
    number: int
    text: str  # its markdown's start


@dataclass(frozen=True, slots=True)
class ResultRow:
    id: str
    url: str
    status: str
    http_status: str
    attempts: int
    replays: int
    elapsed: str
    error: str
    data: str
    document: str = ""  # a document's kind and pages: "application/pdf · 12 pages, 4 read"
    pages: tuple[PagePreview, ...] = ()  # a document's pages (the pages format), each begun
    screenshot: str = ""  # the dashboard's path of the page's screenshot, if it has one


def result_row(task: TaskRecord) -> ResultRow:
    elapsed = DASH if task.elapsed_ms is None else f"{task.elapsed_ms} ms"
    if task.rendered_ms is not None:
        elapsed += f" (rendered in {task.rendered_ms} ms)"
    return ResultRow(
        id=task.id,
        url=task.url,
        status=task.status.value,
        http_status=DASH if task.http_status is None else str(task.http_status),
        attempts=task.attempts,
        replays=task.replays,
        elapsed=elapsed,
        error=task.error or "",
        data=data_preview(task.data),
        document=document_summary(task),
        pages=page_previews(task.data),
        screenshot=screenshot_path(task),
    )


def screenshot_path(task: TaskRecord) -> str:
    """Where the dashboard serves the page's screenshot (its session, not an API key)."""
    url = (task.data or {}).get("screenshot")
    name = url.rpartition("/")[2] if isinstance(url, str) else ""
    if FILE_NAME.fullmatch(name) is None:
        return ""
    return f"/ui/jobs/{task.job_id}/files/{task.id}/{name}"


def document_summary(task: TaskRecord) -> str:
    """What a document result is: its type, its pages and those read ("" for a web page)."""
    metadata = (task.data or {}).get("metadata")
    metadata = metadata if isinstance(metadata, dict) else {}
    count, kind = metadata.get("page_count"), metadata.get("content_type")
    if not isinstance(count, int) or not isinstance(kind, str):
        return ""
    summary = f"{kind} · {count} page{'s' if count != 1 else ''}"
    if 0 < (read := task.metered.document_pages) < count:
        summary += f", {read} read"
    if ocr := task.metered.ocr_pages:
        summary += f", {ocr} by OCR"
    return summary


def page_previews(data: dict[str, Any] | None) -> tuple[PagePreview, ...]:
    """The first :data:`PAGES_SHOWN` pages of a document's ``pages``, each its start."""
    pages = (data or {}).get("pages")
    if not isinstance(pages, list):
        return ()
    found = []
    for page in pages[:PAGES_SHOWN]:
        if isinstance(page, dict) and isinstance(page.get("page_number"), int):
            text = " ".join(str(page.get("markdown") or "").split())
            cut = text if len(text) <= PAGE_PREVIEW_CHARS else text[: PAGE_PREVIEW_CHARS - 1] + "…"
            found.append(PagePreview(page["page_number"], cut))
    return tuple(found)


def data_preview(data: dict[str, Any] | None, limit: int = PREVIEW_CHARS) -> str:
    """Extracted data as compact JSON, cut to ``limit`` characters (``…`` marks the cut)."""
    if data is None:
        return ""
    text = json.dumps(data, ensure_ascii=False, separators=(", ", ": "), default=str)
    return text if len(text) <= limit else text[: limit - 1] + "…"


@dataclass(frozen=True, slots=True)
class DeadLetterRow:
    job_id: str
    task_id: str
    url: str
    error: str
    attempts: int
    replays: int
    when: str


def dead_letter_row(task: TaskRecord, now: datetime) -> DeadLetterRow:
    return DeadLetterRow(
        job_id=task.job_id,
        task_id=task.id,
        url=task.url,
        error=task.error or DASH,
        attempts=task.attempts,
        replays=task.replays,
        when=relative_text(task.updated_at, now),
    )


REASONS = {
    "circuit_open": "Circuit breaker open: the host failed repeatedly (errors, timeouts, 5xx)",
    "held": "Held: the host asked to slow down (Retry-After), or its pace is slow",
}


@dataclass(frozen=True, slots=True)
class PausedRow:
    host: str  # the origin's URL
    reason: str
    why: str
    until: str
    remaining: str


def paused_row(paused: PausedHost, now: datetime) -> PausedRow:
    return PausedRow(
        host=origin_url(paused.host),
        reason=paused.reason,
        why=REASONS.get(paused.reason, paused.reason),
        until=f"{paused.until:%Y-%m-%d %H:%M:%S} UTC",
        remaining=duration_text(max((paused.until - now).total_seconds(), 0.0)),
    )


@dataclass(frozen=True, slots=True)
class WorkerRow:
    id: str
    revision: str
    up_for: str
    last_seen: str
    batches: int
    pages: int
    batches_in_flight: int
    pages_in_flight: int
    proxies: tuple[str, ...] = ()  # "label: served served, failed failed", one a proxy


def worker_row(view: WorkerView, now: datetime) -> WorkerRow:
    return WorkerRow(
        id=view.worker_id,
        revision=view.revision,
        up_for=duration_text(max((now - view.started_at).total_seconds(), 0.0)),
        last_seen=relative_text(view.last_seen, now),
        batches=view.batches,
        pages=view.pages,
        batches_in_flight=view.batches_in_flight,
        pages_in_flight=view.pages_in_flight,
        proxies=tuple(f"{u.label}: {u.served} served, {u.failed} failed" for u in view.proxies),
    )
