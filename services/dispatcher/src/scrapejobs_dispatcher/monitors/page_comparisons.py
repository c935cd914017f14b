"""A monitor's pages compared with their snapshots, each call within a budget.

How two versions of a page differ is the page's site's to choose (and, for fields, the job's
expressions'): the comparison (``page_diff.compare``) runs through the budgeted-work port
(ports/budgeted_work.py), a check's results a hundred pages a call, off the event loop, within
``SCRAPEJOBS_COMPARE_BUDGET_S`` of CPU. Past the budget the pages are still settled honestly:
a page equal to its snapshot is the same, any other is changed, worth telling, with no diff
and ``not_compared`` saying why (``page_diff.unequal``).
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

from scrapejobs_shared.domain.monitor_checks import CheckPage, PageSnapshot, PageStatus, Seen
from scrapejobs_shared.domain.monitor_rules import MonitorRules
from scrapejobs_shared.domain.monitors import MonitorRecord
from scrapejobs_shared.domain.page_diff import PageContent, PageDiff, compare, unequal
from scrapejobs_shared.domain.records import TaskRecord
from scrapejobs_shared.domain.statuses import TaskStatus
from scrapejobs_shared.ports.budgeted_work import Budget, BudgetedWork, OverBudget

log = logging.getLogger(__name__)
GONE = (404, 410)  # a page answered so is removed
Diff = Callable[[PageContent, PageContent, MonitorRules], PageDiff]


@dataclass(frozen=True)
class PageComparisons:
    work: BudgetedWork
    budget: Budget

    async def compared(
        self,
        monitor: MonitorRecord,
        check_id: str,
        tasks: Sequence[TaskRecord],
        snapshots: dict[str, PageSnapshot],
    ) -> tuple[list[CheckPage], list[PageSnapshot]]:
        """:func:`compared_pages`, within the budget."""
        try:
            return await self.work.run(
                self.budget, compared_pages, monitor, check_id, list(tasks), snapshots
            )
        except OverBudget as exc:
            log.warning(
                "pages not compared within their budget",
                extra={"monitor_id": monitor.id, "check_id": check_id, "error": str(exc)},
            )
            return compared_pages(monitor, check_id, tasks, snapshots, _unequal(str(exc)))

    async def diff(
        self, previous: PageContent, current: PageContent, rules: MonitorRules
    ) -> PageDiff:
        """``compare``, within the budget."""
        try:
            return await self.work.run(self.budget, compare, previous, current, rules)
        except OverBudget as exc:
            return unequal(previous, current, str(exc))


def _unequal(why: str) -> Diff:
    return lambda previous, current, _rules: unequal(previous, current, why)


def compared_pages(
    monitor: MonitorRecord,
    check_id: str,
    tasks: Sequence[TaskRecord],
    snapshots: dict[str, PageSnapshot],
    diff: Diff = compare,
) -> tuple[list[CheckPage], list[PageSnapshot]]:
    """Each page's status and diff, and the snapshots that change (not those of pages found
    exactly as their snapshot has them)."""
    pages: list[CheckPage] = []
    changed: list[PageSnapshot] = []
    for task in tasks:
        snapshot = snapshots.get(task.url) or PageSnapshot(task.url, "", None)
        page, found = _page(monitor, check_id, task, snapshot.baseline(check_id), diff)
        pages.append(page)
        kept = snapshot.written_by != check_id and snapshot.current == found
        if page.status is not PageStatus.ERROR and not (
            kept and snapshot.validators == task.validators
        ):
            changed.append(snapshot.after(check_id, found, task.validators))
    return pages, changed


def _page(
    monitor: MonitorRecord, check_id: str, task: TaskRecord, baseline: Seen | None, diff: Diff
) -> tuple[CheckPage, Seen | None]:
    """What a check's result says of its page, compared with ``baseline``; and what the
    page now holds (None: gone)."""
    if task.http_status in GONE:
        if baseline is None:
            error = f"HTTP {task.http_status}"
            return CheckPage(task.url, PageStatus.ERROR, task.http_status, error=error), None
        return CheckPage(task.url, PageStatus.REMOVED, task.http_status, notify=True), None
    if task.status is not TaskStatus.SUCCEEDED:
        error = task.error or task.status.value
        return CheckPage(task.url, PageStatus.ERROR, task.http_status, error=error), None
    data = task.data or {}
    found = Seen(_compared_fields(monitor, data), str(data.get("markdown") or ""))
    if baseline is None:
        return CheckPage(task.url, PageStatus.NEW, task.http_status, notify=True), found
    before = PageContent(baseline.data, baseline.markdown)
    change = diff(before, PageContent(found.data, found.markdown), monitor.request.rules)
    if change.status == "same":
        return CheckPage(task.url, PageStatus.SAME, task.http_status), found
    page = CheckPage(
        task.url,
        PageStatus.CHANGED,
        task.http_status,
        diff=change.to_dict(),
        notify=change.notify,
        held_back_by=change.held_back_by,
    )
    return page, found


def _compared_fields(monitor: MonitorRecord, data: dict[str, Any]) -> dict[str, Any]:
    """What a check compares of a result's data, field by field: the extracted fields, and
    the ``ai`` stage's answer (an object's fields each on its own; an extracted field of the
    same name wins)."""
    found = {name: value for name, value in data.items() if name in monitor.request.extract}
    into = monitor.request.ai_field()
    answer = data.get(into) if into is not None else None
    if isinstance(answer, dict):
        return {str(name): value for name, value in answer.items()} | found
    if into is not None and answer is not None:
        found[into] = answer
    return found
