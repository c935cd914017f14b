"""How the CLI shows API objects to a person (Rich tables); ``--json`` bypasses all of this."""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping
from datetime import datetime
from typing import Any

from rich.markup import escape
from rich.table import Table
from rich.text import Text

from scrapejobs_client.models import (
    TASK_STATUSES,
    AiUsage,
    DeadLetter,
    Health,
    HostState,
    Job,
    JobSummary,
    Stats,
    StatsHistory,
    TaskResult,
    Worker,
)

STATUS_STYLES = {
    "queued": "yellow",
    "running": "cyan",
    "processing": "blue",
    "completed": "green",
    "succeeded": "green",
    "cancelled": "magenta",
    "failed": "red",
    "dead_lettered": "red",
    "HEALTHY": "bold green",
    "DEGRADED": "bold yellow",
    "UNHEALTHY": "bold red",
}


def status_text(status: str) -> Text:
    return Text(status, style=STATUS_STYLES.get(status, ""))


def when(value: datetime | str | None) -> str:
    if value is None:
        return "-"
    if isinstance(value, str):
        return value
    return value.astimezone().strftime("%Y-%m-%d %H:%M:%S")


def duration(seconds: float | None) -> str:
    if seconds is None:
        return "-"
    seconds = max(0, round(seconds))
    hours, rest = divmod(seconds, 3600)
    minutes, secs = divmod(rest, 60)
    return f"{hours}:{minutes:02d}:{secs:02d}" if hours else f"{minutes}:{secs:02d}"


def number(value: float | None, unit: str = "", digits: int = 1) -> str:
    return "-" if value is None else f"{value:.{digits}f}{unit}"


def percent(value: float | None) -> str:
    return "-" if value is None else f"{value * 100:.1f}%"


def counts_text(counts: Mapping[str, int]) -> Text:
    """``succeeded 9 · failed 1``: the statuses that have tasks, in the API's order."""
    text = Text()
    ordered = [s for s in TASK_STATUSES if s in counts] + sorted(set(counts) - set(TASK_STATUSES))
    for status in ordered:
        if counts[status]:
            if text:
                text.append(" · ")
            text.append(f"{status} {counts[status]}", style=STATUS_STYLES.get(status, ""))
    return text or Text("no tasks")


def job_table(job: Job) -> Table:
    table = _fields_table()
    table.add_row("job", job.id)
    table.add_row("status", status_text(job.status))
    table.add_row("kind", job.kind or "-")
    table.add_row("tasks", f"{job.total}")
    table.add_row("counts", counts_text(job.counts))
    if job.progress is not None:
        progress = job.progress
        table.add_row("progress", f"{progress.done}/{progress.total} ({progress.percent:.1f}%)")
        table.add_row("rate", number(progress.rate_per_s, "/s"))
        table.add_row("ETA", duration(progress.eta_s))
    table.add_row("created", when(job.created_at))
    table.add_row("started", when(job.started_at))
    table.add_row("finished", when(job.finished_at))
    if job.labels:
        table.add_row("labels", ", ".join(f"{k}={v}" for k, v in job.labels.items()))
    if job.ai_usage is not None:
        table.add_row("ai stage", usage_text(job.ai_usage))
    return table


def usage_text(usage: AiUsage) -> str:
    """``12 model calls (3 reused) · 40210 tokens in, 1502 out · cost 0.0421``."""
    text = f"{usage.calls} model calls ({usage.cached} reused) · "
    text += f"{usage.input_tokens} tokens in, {usage.output_tokens} out"
    return text if usage.cost is None else f"{text} · cost {usage.cost:g}"


def jobs_table(jobs: Iterable[JobSummary]) -> Table:
    table = Table("id", "status", "kind", "created", "labels", box=None, header_style="bold")
    for job in jobs:
        labels = ", ".join(f"{k}={v}" for k, v in job.labels.items())
        table.add_row(job.id, status_text(job.status), job.kind or "", when(job.created_at), labels)
    return table


def results_table(results: Iterable[TaskResult], *, header: bool) -> Table:
    table = Table(box=None, show_header=header, header_style="bold")
    for column in ("url", "status", "http", "tries", "error / data"):
        table.add_column(column, overflow="fold")
    for result in results:
        detail = result.error or (_compact(result.data) if result.data is not None else "")
        table.add_row(
            escape(result.url),
            status_text(result.status),
            "" if result.http_status is None else str(result.http_status),
            str(result.attempts),
            escape(detail),
        )
    return table


def dead_letters_table(letters: Iterable[DeadLetter]) -> Table:
    table = Table(box=None, header_style="bold")
    for column in ("job", "task", "url", "error", "tries", "replays", "dead-lettered"):
        table.add_column(column, overflow="fold")
    for letter in letters:
        table.add_row(
            letter.job_id,
            letter.task_id,
            escape(letter.url),
            escape(letter.error or ""),
            str(letter.attempts),
            str(letter.replays),
            when(letter.dead_lettered_at),
        )
    return table


def host_table(host: HostState) -> Table:
    table = _fields_table()
    table.add_row("host", host.host)
    table.add_row("paused", Text("yes", style="bold red") if host.paused else Text("no"))
    table.add_row("circuit open until", when(host.circuit_open_until))
    table.add_row("next request at", when(host.next_request_at))
    table.add_row("consecutive failures", str(host.consecutive_failures))
    table.add_row("slots held", str(host.in_flight))
    return table


def workers_table(workers: Iterable[Worker]) -> Table:
    table = Table(
        "worker",
        "revision",
        "started",
        "last seen",
        "batches",
        "pages",
        "in flight (batches · pages)",
        "proxies (served/failed)",
        box=None,
        header_style="bold",
    )
    for worker in workers:
        table.add_row(
            escape(worker.id),
            escape(worker.revision),
            when(worker.started_at),
            when(worker.last_seen),
            str(worker.batches),
            str(worker.pages),
            f"{worker.in_flight.batches} · {worker.in_flight.pages}",
            escape(", ".join(f"{p.proxy} {p.served}/{p.failed}" for p in worker.proxies))
            or "direct",
        )
    return table


def stats_tables(stats: Stats) -> list[Table]:
    summary = _fields_table()
    summary.add_row("window", stats.window)
    summary.add_row("tasks", counts_text(stats.tasks.model_dump(exclude={"unusable"})))
    if any(stats.tasks.unusable.values()):
        summary.add_row("not the page", counts_text(stats.tasks.unusable))
    summary.add_row("jobs", counts_text(stats.jobs))
    summary.add_row("throughput", number(stats.throughput_per_s, "/s", 2))
    summary.add_row("error rate", percent(stats.error_rate))
    processing = stats.processing
    summary.add_row(
        "processing",
        f"avg {number(processing.avg_ms, ' ms', 0)} · p50 {number(processing.p50_ms, ' ms', 0)}"
        f" · p95 {number(processing.p95_ms, ' ms', 0)}",
    )
    summary.add_row("fetch p95", number(stats.fetch.p95_ms, " ms", 0))
    summary.add_row("oldest queued", duration(stats.oldest_queued_age_s))
    if stats.ai.calls or stats.ai.cached or stats.ai.cost is not None:
        summary.add_row("ai stage", usage_text(stats.ai))
    if stats.proxied_pages:
        summary.add_row("through proxies", counts_text(stats.proxied_pages))
    for entry in stats.proxies:
        summary.add_row(
            f"proxy {escape(entry.proxy)}", f"{entry.served} served · {entry.failed} failed"
        )
    tables = [summary]
    if stats.paused_hosts:
        paused = Table("paused host", "until", "reason", box=None, header_style="bold")
        for host in stats.paused_hosts:
            paused.add_row(host.host, host.until, escape(host.reason))
        tables.append(paused)
    return tables


def history_table(history: StatsHistory) -> Table:
    table = Table(box=None, header_style="bold", title="by hour")
    for column in ("hour", "processed", "ok", "failed", "dead", "success", "avg", "p95", "/s"):
        table.add_column(column, justify="left" if column == "hour" else "right")
    for hour in history.history:
        table.add_row(
            hour.hour,
            str(hour.processed),
            str(hour.succeeded),
            str(hour.failed),
            str(hour.dead_lettered),
            percent(hour.success_rate),
            number(hour.avg_ms, " ms", 0),
            number(hour.p95_ms, " ms", 0),
            number(hour.throughput_per_s, "", 2),
        )
    return table


def health_tables(health: Health) -> list[Table]:
    summary = _fields_table()
    summary.add_row("status", status_text(health.status))
    for reason in health.reasons:
        summary.add_row("reason", escape(reason))
    tables = [summary]
    if health.checks:
        checks = Table("check", "detail", box=None, header_style="bold")
        for name, detail in health.checks.items():
            checks.add_row(name, escape(_compact(detail)))
        tables.append(checks)
    return tables


def _fields_table() -> Table:
    table = Table(box=None, show_header=False)
    table.add_column(style="bold")
    table.add_column(overflow="fold")
    return table


def _compact(value: Any, limit: int = 200) -> str:
    text = json.dumps(value, ensure_ascii=False, separators=(",", ":"), default=str)
    return text if len(text) <= limit else text[: limit - 1] + "…"
