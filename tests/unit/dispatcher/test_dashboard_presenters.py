"""What the dashboard prints: durations, relative times, rates, host keys as origins, chart
columns and job rows (pure functions over records)."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest

from scrapejobs_dispatcher.jobs.job_service import JobView
from scrapejobs_dispatcher.system_health import HourRow, StatsReport
from scrapejobs_dispatcher.ui import presenters
from scrapejobs_shared.domain.jobspec import JobSpec
from scrapejobs_shared.domain.model_usage import ModelPrices, ModelUsage
from scrapejobs_shared.domain.outcome_stats import Totals
from scrapejobs_shared.domain.progress import Progress
from scrapejobs_shared.domain.records import JobRecord
from scrapejobs_shared.domain.statuses import JobStatus, TaskStatus
from scrapejobs_shared.politeness.host_gate import PausedHost
from scrapejobs_shared.politeness.host_key import origin_url
from scrapejobs_shared.ports.outcome_stats import OpenWork

NOW = datetime(2026, 11, 23, 10, 0, tzinfo=UTC)


@pytest.mark.parametrize(
    ("seconds", "text"),
    [
        (None, "—"),
        (0.4, "<1 s"),
        (42.9, "42 s"),
        (60, "1 min"),
        (185, "3 min 5 s"),
        (7_800, "2 h 10 min"),
        (3_600 * 76 + 59, "3 d 4 h"),
        (86_400 + 30, "1 d"),
    ],
)
def test_durations_show_the_two_largest_units(seconds: float | None, text: str) -> None:
    assert presenters.duration_text(seconds) == text


def test_relative_times() -> None:
    assert presenters.relative_text(NOW - timedelta(seconds=12), NOW) == "12 s ago"
    assert presenters.relative_text(NOW + timedelta(minutes=3), NOW) == "in 3 min"
    assert presenters.relative_text(NOW, NOW) == "now"
    assert presenters.relative_text(None, NOW) == "—"


def test_rates_and_percentages() -> None:
    assert presenters.percent_text(0.0312) == "3.1%"
    assert presenters.percent_text(None) == "—"
    assert presenters.rate_text(0.5) == "0.50/s"
    assert presenters.rate_text(325.4) == "325/s"
    assert presenters.rate_text(None) == "—"


@pytest.mark.parametrize(
    ("key", "origin"),
    [
        ("https~example.com~443", "https://example.com"),
        ("http~example.com~8080", "http://example.com:8080"),
        ("http~::1~8080", "http://[::1]:8080"),
        ("https~sha256-abc~443", "https://sha256-abc"),
        ("not-a-key", "not-a-key"),
        ("ftp~x~21", "ftp~x~21"),
    ],
)
def test_host_keys_read_as_origins(key: str, origin: str) -> None:
    assert origin_url(key) == origin


def test_a_paused_host_says_why_and_for_how_long() -> None:
    row = presenters.paused_row(
        PausedHost("https~shop.test~443", NOW + timedelta(seconds=75), "circuit_open"), NOW
    )
    assert row.host == "https://shop.test" and row.remaining == "1 min 15 s"
    assert row.why.startswith("Circuit breaker open")
    assert row.until == "2026-11-23 10:01:15 UTC"


def test_history_series_are_columns_with_gaps_for_idle_hours() -> None:
    busy = Totals({TaskStatus.SUCCEEDED: 3, TaskStatus.FAILED: 1})
    rows = [HourRow(NOW - timedelta(hours=1), Totals(), 3600), HourRow(NOW, busy, 60)]

    series = presenters.history_series(rows)

    assert series["hour"] == [(NOW - timedelta(hours=1)).timestamp(), NOW.timestamp()]
    assert series["processed"] == [0, 4] and series["failed"] == [0, 1]
    assert series["error_rate"] == [None, 25.0]
    [line] = presenters.history_lines(rows)  # idle hours are left out of the table
    assert line.processed == 4 and line.error_rate == "25.0%"


def test_data_preview_is_cut_with_a_mark() -> None:
    assert presenters.data_preview(None) == ""
    assert presenters.data_preview({"a": 1}) == '{"a": 1}'
    long = presenters.data_preview({"text": "x" * 500}, limit=50)
    assert len(long) == 50 and long.endswith("…")


def _view(status: JobStatus, done: int, total: int, eta_s: float | None) -> JobView:
    job = JobRecord(
        id="j1",
        status=status,
        spec=JobSpec(),
        created_at=NOW - timedelta(minutes=2),
        updated_at=NOW,
        expire_at=NOW + timedelta(days=1),
        labels={"team": "pricing", "a": "b"},
        total=total,
    )
    percent = 100.0 * done / total
    progress = Progress(done, total, percent, 2.5 if eta_s else None, eta_s, None)
    counts = {s: 0 for s in TaskStatus} | {TaskStatus.SUCCEEDED: done}
    return JobView(job, counts | {TaskStatus.QUEUED: total - done}, progress)


def test_job_rows_say_when_the_job_will_finish() -> None:
    running = presenters.JobRow.of(_view(JobStatus.RUNNING, 3, 8, 125.0), NOW)
    assert running.eta == "2 min 5 s" and running.rate == "2.50/s"
    assert running.percent == 37 and running.percent_label == "38%"
    assert running.labels == "a=b, team=pricing" and running.created == "2 min ago"
    assert presenters.JobRow.of(_view(JobStatus.RUNNING, 0, 8, None), NOW).eta == "estimating…"
    done = presenters.JobRow.of(_view(JobStatus.COMPLETED, 8, 8, 0.0), NOW)
    assert done.eta == "finished" and done.finished


def test_counts_follow_a_task_s_life() -> None:
    counts = presenters.count_list({TaskStatus.DEAD_LETTERED: 2})
    assert [c.status for c in counts] == [
        "queued",
        "running",
        "processing",
        "succeeded",
        "failed",
        "dead_lettered",
        "cancelled",
    ]
    assert counts[5].label == "dead lettered" and counts[5].n == 2 and counts[0].n == 0
    assert {c.status for c in counts} == {s.value for s in TaskStatus}  # none left out


def test_live_tiles_show_throughput_backlog_and_error_rate() -> None:
    totals = Totals({TaskStatus.SUCCEEDED: 3, TaskStatus.DEAD_LETTERED: 1})
    open_work = OpenWork(5, 2, NOW - timedelta(seconds=90), jobs_read=3, partial=True)
    since = NOW - timedelta(minutes=10)
    report = StatsReport("5m", since, NOW, totals, {}, open_work, [])

    throughput, backlog, errors = presenters.live_tiles(report)

    assert throughput.value == "0.01/s" and throughput.note == "4 tasks since 09:50 UTC"
    assert backlog.value == "5+ queued · 2 running"
    assert backlog.note == "oldest queued 1 min 30 s ago"
    assert errors.value == "25.0%" and errors.note == "0 failed, 1 dead-lettered"


def test_the_ai_stage_s_usage_reads_as_calls_reuses_tokens_and_cost() -> None:
    assert presenters.usage_text(None) == ""
    usage = ModelUsage(calls=12, cached=3, input_tokens=40_210, output_tokens=1_502)
    assert presenters.usage_text(usage) == "12 model calls, 3 reused; 40,210 tokens in, 1,502 out"
    assert presenters.usage_text(usage, 0.04213).endswith("1,502 out; cost 0.04213")
    assert presenters.usage_text(ModelUsage(calls=1)).startswith("1 model call,")
    assert [presenters.cost_text(c) for c in (0.0, 0.000123, 12.345, 12_345.6)] == [
        "0",
        "0.000123",
        "12.35",
        "12,346",
    ]


def test_the_ai_tile_shows_calls_or_cost_and_is_left_out_when_there_is_neither() -> None:
    open_work = OpenWork(0, 0, None, jobs_read=0, partial=False)
    since = NOW - timedelta(minutes=10)
    usage = ModelUsage(calls=4, cached=1, input_tokens=2_000_000, output_tokens=1_000)

    def tiles(totals: Totals, prices: ModelPrices | None) -> list[presenters.Tile]:
        report = StatsReport("5m", since, NOW, totals, {}, open_work, [], prices)
        return presenters.live_tiles(report)

    assert len(tiles(Totals(), None)) == 3  # no ai work, no prices: no tile
    [*_, calls] = tiles(Totals(ai=usage), None)
    assert calls.label == "AI stage" and calls.value == "4 model calls, 1 reused"
    assert calls.note == "2,000,000 tokens in, 1,000 out"
    [*_, cost] = tiles(Totals(ai=usage), ModelPrices(0.5, 2.0))
    assert cost.value == "cost 1.00" and cost.note.startswith("4 model calls, 1 reused; 2,000,000")
    [*_, idle] = tiles(Totals(), ModelPrices(0.5, 2.0))
    assert idle.value == "cost 0"  # prices set: the tile is there, at zero
