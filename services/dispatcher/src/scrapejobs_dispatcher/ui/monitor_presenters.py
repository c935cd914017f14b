"""What the monitor pages show: a monitor's row (its schedule, its last and next check), a
check's summary, and a changed page's diff side by side (each field's previous and current
value; the text's lines, removed on the left and added on the right)."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from typing import Any

from scrapejobs_shared.domain.monitor_checks import CheckPage, CheckRecord
from scrapejobs_shared.domain.monitors import MonitorRecord

STATUSES = ("changed", "new", "removed", "error", "same")


def _when(moment: datetime | None) -> str:
    return "—" if moment is None else f"{moment:%Y-%m-%d %H:%M} UTC"


@dataclass(frozen=True, slots=True)
class MonitorRow:
    id: str
    name: str
    status: str
    schedule: str
    targets: str
    last_check_id: str | None
    last_check_at: str
    next_check_at: str
    checks: int

    @classmethod
    def of(cls, monitor: MonitorRecord) -> MonitorRow:
        request = monitor.request
        schedule = request.schedule
        urls = request.target_urls()
        if request.search is not None:  # each check: what the search finds then
            search = request.search
            targets = f"search for “{search.query}” ({', '.join(search.sources)}, {search.limit})"
        elif request.crawl is not None:
            targets = f"crawl of {urls[0]}"
        else:
            targets = urls[0] if len(urls) == 1 else f"{urls[0]} and {len(urls) - 1} more"
        return cls(
            id=monitor.id,
            name=request.name,
            status=request.status.value,
            schedule=f"{schedule.text or schedule.cron} ({schedule.timezone})",
            targets=targets,
            last_check_id=monitor.last_check_id,
            last_check_at=_when(monitor.last_check_at),
            next_check_at=_when(monitor.next_check_at),
            checks=monitor.checks,
        )


@dataclass(frozen=True, slots=True)
class CheckRow:
    id: str
    status: str
    trigger: str
    started: str
    finished: str
    counts: list[tuple[str, int]]  # pages by status, those there are

    @classmethod
    def of(cls, check: CheckRecord) -> CheckRow:
        counts = [(name, check.summary.get(name, 0)) for name in STATUSES]
        return cls(
            id=check.id,
            status=check.status.value,
            trigger=check.trigger,
            started=_when(check.created_at),
            finished=_when(check.finished_at),
            counts=[(name, n) for name, n in counts if n],
        )


@dataclass(frozen=True, slots=True)
class FieldRow:
    name: str
    previous: str
    current: str
    change: str  # a number's change, a list's items added and removed; "" otherwise
    held_back_by: str


@dataclass(frozen=True, slots=True)
class LineRow:
    """One row of a side-by-side text diff: the previous line, the current one (either may be
    empty), and whether each was removed or added."""

    previous: str
    current: str
    removed: bool
    added: bool


@dataclass(frozen=True, slots=True)
class PageRow:
    url: str
    status: str
    status_code: int | None
    notify: bool
    held_back_by: str
    error: str | None
    fields: list[FieldRow]
    lines: list[LineRow]

    @classmethod
    def of(cls, page: CheckPage) -> PageRow:
        diff = page.diff or {}
        return cls(
            url=page.url,
            status=page.status.value,
            status_code=page.status_code,
            notify=page.notify,
            held_back_by=", ".join(page.held_back_by),
            error=page.error,
            fields=[_field(name, change) for name, change in (diff.get("fields") or {}).items()],
            lines=side_by_side(str(diff.get("text") or "")),
        )


def _field(name: str, change: dict[str, Any]) -> FieldRow:
    parts = []
    if change.get("change") is not None:
        pct = change.get("change_pct")
        parts.append(f"{change['change']:+g}" + (f" ({pct:+.2f}%)" if pct is not None else ""))
    if change.get("added"):
        parts.append("added: " + ", ".join(map(str, change["added"])))
    if change.get("removed"):
        parts.append("removed: " + ", ".join(map(str, change["removed"])))
    return FieldRow(
        name=name,
        previous=_shown(change.get("previous")),
        current=_shown(change.get("current")),
        change="; ".join(parts),
        held_back_by=str(change.get("held_back_by") or ""),
    )


def _shown(value: Any) -> str:
    if value is None:
        return "—"
    if isinstance(value, list):
        return ", ".join(map(str, value))
    return str(value)


def side_by_side(unified: str) -> list[LineRow]:
    """A unified diff as rows of two columns: each run of removed lines beside the run of
    added lines that follows it; unchanged lines on both sides."""
    rows: list[LineRow] = []
    removed: list[str] = []
    added: list[str] = []

    def flush() -> None:
        for n in range(max(len(removed), len(added))):
            left = removed[n] if n < len(removed) else ""
            right = added[n] if n < len(added) else ""
            rows.append(LineRow(left, right, n < len(removed), n < len(added)))
        removed.clear()
        added.clear()

    for line in unified.splitlines():
        if line.startswith(("---", "+++")):
            continue
        if line.startswith("@@"):
            flush()
            rows.append(LineRow("…", "…", False, False))
        elif line.startswith("-"):
            if added:
                flush()
            removed.append(line[1:])
        elif line.startswith("+"):
            added.append(line[1:])
        else:
            flush()
            text = line[1:] if line.startswith(" ") else line
            rows.append(LineRow(text, text, False, False))
    flush()
    return rows
