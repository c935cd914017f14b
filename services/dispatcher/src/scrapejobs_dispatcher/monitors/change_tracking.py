"""Firecrawl's ``changeTracking`` format on ``/v2/scrape``: a scraped page compared with the
previous scrape of its URL by the same team and ``tag``.

The previous scrape is a page snapshot, as a monitor keeps one, of a tracker named by the
team and the tag (``trk_`` and a digest), kept ``KEPT_DAYS`` after the last scrape. The
comparison is a monitor's (page_diff.py, no noise rules): the markdown line by line
(``git-diff`` mode: ``diff.text``, a unified diff, and ``diff.json``, its files, chunks and
changes) and, in ``json`` mode, the fields the ai stage extracted (``json``: each changed
field's ``previous`` and ``current``). A snapshot remembers the job that wrote it, so a
scrape answered twice (Firecrawl's SDK retries one that timed out) compares with the same
previous scrape both times.

``changeStatus``: ``new`` (never scraped before), ``same``, ``changed``, ``removed`` (it
answered 404 or 410 after it had been seen).
"""

from __future__ import annotations

import hashlib
from collections.abc import Callable, Sequence
from datetime import datetime, timedelta
from typing import Any

from scrapejobs_dispatcher.monitors.page_comparisons import PageComparisons
from scrapejobs_shared.domain.monitor_checks import PageSnapshot, Seen
from scrapejobs_shared.domain.monitor_rules import MonitorRules
from scrapejobs_shared.domain.page_diff import PageContent, PageDiff
from scrapejobs_shared.domain.records import TaskRecord
from scrapejobs_shared.ports.monitor_checks import MonitorChecks

KEPT_DAYS = 30
GONE = (404, 410)


class ChangeTracker:
    def __init__(
        self, checks: MonitorChecks, comparisons: PageComparisons, clock: Callable[[], datetime]
    ) -> None:
        self._checks = checks
        self._comparisons = comparisons
        self._clock = clock

    async def tracked(
        self,
        tenant: str,
        tag: str | None,
        page: TaskRecord,
        modes: Sequence[str],
        json_field: str | None,
    ) -> dict[str, Any]:
        """The page's ``changeTracking`` (``json_field``: where its ``json`` mode's fields
        are); its snapshot moves on to this scrape."""
        tracker = tracker_id(tenant, tag)
        found = await self._checks.snapshots_of(tracker, [page.url])
        snapshot = found.get(page.url) or PageSnapshot(page.url, "", None)
        previous = snapshot.baseline(page.job_id)
        now = self._clock()
        current = None if page.http_status in GONE else _seen(page, json_field, now)
        answer: dict[str, Any] = {
            "previousScrapeAt": _iso(previous.at if previous is not None else None),
            "visibility": "visible",
        }
        if previous is None:
            answer["changeStatus"] = "new" if current is not None else "removed"
        elif current is None:
            answer["changeStatus"] = "removed"
        else:
            diff = await self._comparisons.diff(
                _content(previous), _content(current), MonitorRules()
            )
            answer["changeStatus"] = diff.status
            if diff.status == "changed":
                answer |= _shown(diff, page.url, modes)
        if current is not None or previous is not None:
            moved = snapshot.after(page.job_id, current)
            await self._checks.keep(tracker, [moved], now + timedelta(days=KEPT_DAYS))
        return answer


def tracker_id(tenant: str, tag: str | None) -> str:
    digest = hashlib.sha256(f"{tenant}\x00{tag or ''}".encode()).hexdigest()
    return f"trk_{digest[:32]}"


def _seen(page: TaskRecord, json_field: str | None, at: datetime) -> Seen:
    data = page.data or {}
    fields = data.get(json_field) if json_field is not None else None
    return Seen(
        dict(fields) if isinstance(fields, dict) else {}, str(data.get("markdown") or ""), at
    )


def _content(seen: Seen) -> PageContent:
    return PageContent(seen.data, seen.markdown)


def _shown(diff: PageDiff, url: str, modes: Sequence[str]) -> dict[str, Any]:
    shown: dict[str, Any] = {}
    if "git-diff" in modes and diff.text:
        shown["diff"] = {"text": diff.text, "json": parsed_diff(diff.text, url)}
    if "json" in modes:
        shown["json"] = {
            name: {"previous": change.previous, "current": change.current}
            for name, change in diff.fields.items()
        }
    return shown


def parsed_diff(text: str, url: str) -> dict[str, Any]:
    """A unified diff as parse-diff's AST (what Firecrawl's ``diff.json`` holds): its file,
    chunks and each line's change (``add``, ``del``, ``normal``)."""
    chunks: list[dict[str, Any]] = []
    additions = deletions = 0
    for line in text.splitlines():
        if line.startswith(("---", "+++")):
            continue
        if line.startswith("@@"):
            chunks.append({"content": line, "changes": []})
            continue
        if not chunks:
            continue
        kind = {"+": "add", "-": "del"}.get(line[:1], "normal")
        additions += kind == "add"
        deletions += kind == "del"
        chunks[-1]["changes"].append({"type": kind, "content": line})
    file = {
        "from": url,
        "to": url,
        "chunks": chunks,
        "additions": additions,
        "deletions": deletions,
    }
    return {"files": [file]}


def _iso(moment: datetime | None) -> str | None:
    return None if moment is None else moment.isoformat()
