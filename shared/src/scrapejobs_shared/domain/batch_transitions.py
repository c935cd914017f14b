"""How a batch's tasks change: claimed, settled, closed. Pure; every store adapter applies
these, so the memory twin and Firestore cannot disagree on what a change means.

Rules: a terminal task is never changed again; a claim counts one attempt for each task its
lane runs (a ``Release`` with ``refund_attempt`` gives it back); a task's status only moves
forward. The fetch lane runs ``queued`` and ``running`` tasks and may hand one to the
processing lane (``HandOffTask``: ``running`` → ``processing``, with what the processing lane
needs); the processing lane finishes ``processing`` tasks and counts no attempt.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Collection, Sequence
from dataclasses import dataclass, field, replace
from datetime import datetime
from typing import Literal

from scrapejobs_shared.domain.job_tally import JobTally
from scrapejobs_shared.domain.model_usage import ModelUsage
from scrapejobs_shared.domain.outcome_stats import Totals, outcome_totals
from scrapejobs_shared.domain.records import (
    BatchItem,
    BatchRecord,
    Handoff,
    TaskOutcome,
    TaskRecord,
    kept_error,
)
from scrapejobs_shared.domain.statuses import FETCH_STATUSES, TaskStatus

Lane = Literal["fetch", "processing"]


@dataclass(frozen=True, slots=True)
class FinishTask:
    task_id: str
    outcome: TaskOutcome
    service_ms: int | None = None  # picked up by the worker until its outcome was known
    usage: ModelUsage | None = None  # what asking the model for it cost (the ai stage)
    kept_under: str | None = None  # the page cache key its result is indexed under, if kept


@dataclass(frozen=True, slots=True)
class ReleaseTask:
    task_id: str
    error: str | None
    refund_attempt: bool = False


@dataclass(frozen=True, slots=True)
class HandOffTask:
    """The fetch lane is done with a running task: its later stages run on the processing
    lane, from ``handoff``."""

    task_id: str
    handoff: Handoff


@dataclass(frozen=True, slots=True)
class Applied:
    batch: BatchRecord  # the batch after the change
    results: tuple[TaskRecord, ...]  # result records of the tasks that became terminal
    deltas: dict[TaskStatus, int]  # count changes per status
    stats: Totals = field(default_factory=Totals)  # outcomes of the tasks that became terminal
    handoffs: tuple[tuple[str, Handoff], ...] = ()  # (task id, handoff) to store
    handoffs_done: tuple[str, ...] = ()  # tasks the processing lane finished: drop theirs
    usage: ModelUsage = field(default_factory=ModelUsage)  # of the tasks that became terminal
    kept: tuple[tuple[str, TaskRecord], ...] = ()  # (page cache key, result) to index
    unchanged: tuple[str, ...] = ()  # tasks that succeeded unchanged: no result of their own

    @property
    def changed(self) -> bool:
        return bool(self.results) or any(self.deltas.values())

    @property
    def tally(self) -> JobTally:
        """What the tasks that became terminal add to their job's tally."""
        return JobTally(self.usage, self.stats.uncharged, self.stats.metered)

    @property
    def finished(self) -> tuple[str, ...]:
        """The tasks that became terminal."""
        return tuple(record.id for record in self.results) + self.unchanged


def claim(batch: BatchRecord, lease_until: datetime, lane: Lane = "fetch") -> Applied:
    """The batch is leased. On the fetch lane every ``queued`` or ``running`` task becomes
    ``running`` with one more attempt; the processing lane changes no task."""
    deltas: Counter[TaskStatus] = Counter()
    items = []
    for item in batch.items:
        if lane == "processing" or item.status not in FETCH_STATUSES:
            items.append(item)
            continue
        deltas[item.status] -= 1
        deltas[TaskStatus.RUNNING] += 1
        items.append(replace(item, status=TaskStatus.RUNNING, attempts=item.attempts + 1))
    claimed = replace(batch, items=tuple(items), lease_until=lease_until)
    return Applied(claimed, (), _nonzero(deltas))


def settle(
    batch: BatchRecord,
    changes: Sequence[FinishTask | ReleaseTask | HandOffTask],
    now: datetime,
) -> Applied:
    """Apply the changes that are still legal (to open tasks of this batch)."""
    by_id = {item.task_id: item for item in batch.items}
    deltas: Counter[TaskStatus] = Counter()
    results: list[TaskRecord] = []
    unchanged: list[TaskRecord] = []
    handoffs: list[tuple[str, Handoff]] = []
    done: list[str] = []
    kept: list[tuple[str, TaskRecord]] = []
    usage = ModelUsage()
    for change in changes:
        item = by_id.get(change.task_id)
        if item is None or item.status.terminal:
            continue
        if not isinstance(change, FinishTask):
            by_id[item.task_id] = _moved(item, change, deltas, handoffs)
            continue
        if not change.outcome.status.terminal or not item.status.may_become(change.outcome.status):
            continue  # a finish is terminal; status never moves backwards
        record = result_record(batch, item, change.outcome, now)
        if item.status is TaskStatus.PROCESSING:
            done.append(item.task_id)
        if change.usage is not None:
            usage = usage + change.usage
        by_id[item.task_id] = replace(item, status=record.status, error=record.error)
        deltas[item.status] -= 1
        deltas[record.status] += 1
        if change.outcome.unchanged and record.status is TaskStatus.SUCCEEDED:
            unchanged.append(record)  # counted, and no result of its own
            continue
        results.append(record)
        if change.kept_under is not None and record.status is TaskStatus.SUCCEEDED:
            kept.append((change.kept_under, record))
    items = tuple(by_id[item.task_id] for item in batch.items)
    service_ms = {
        change.task_id: change.service_ms
        for change in changes
        if isinstance(change, FinishTask) and change.service_ms is not None
    }
    stats = outcome_totals(results + unchanged, service_ms, usage)
    return Applied(
        replace(batch, items=items),
        tuple(results),
        _nonzero(deltas),
        stats,
        tuple(handoffs),
        tuple(done),
        usage,
        tuple(kept),
        tuple(record.id for record in unchanged),
    )


def _moved(
    item: BatchItem,
    change: ReleaseTask | HandOffTask,
    deltas: Counter[TaskStatus],
    handoffs: list[tuple[str, Handoff]],
) -> BatchItem:
    """An open task released (its attempt refunded, if asked) or handed off."""
    if isinstance(change, ReleaseTask):
        counted = item.status is not TaskStatus.PROCESSING  # processing counts none
        attempts = item.attempts - 1 if change.refund_attempt and counted else item.attempts
        return replace(item, error=change.error, attempts=max(0, attempts))
    if item.status is not TaskStatus.RUNNING:
        return item
    deltas[TaskStatus.RUNNING] -= 1
    deltas[TaskStatus.PROCESSING] += 1
    handoffs.append((item.task_id, change.handoff))
    return replace(item, status=TaskStatus.PROCESSING, error=None)


def close(
    batch: BatchRecord,
    outcome: TaskOutcome,
    now: datetime,
    statuses: Collection[TaskStatus] | None = None,
    spent_at: int | None = None,
) -> Applied:
    """Every open task (of ``statuses``, when given; that spent at least ``spent_at``
    attempts, when given) ends with ``outcome``; the lease is dropped."""
    changes = [
        FinishTask(item.task_id, outcome)
        for item in closable(batch, statuses)
        if spent_at is None or item.attempts >= spent_at
    ]
    applied = settle(batch, changes, now)
    return replace(applied, batch=replace(applied.batch, lease_until=None))


def closable(batch: BatchRecord, statuses: Collection[TaskStatus] | None) -> tuple[BatchItem, ...]:
    """The open tasks of ``statuses`` (all, when None): those a close may end."""
    return tuple(item for item in batch.open_items if statuses is None or item.status in statuses)


def result_record(
    batch: BatchRecord, item: BatchItem, outcome: TaskOutcome, now: datetime
) -> TaskRecord:
    return TaskRecord(
        job_id=batch.job_id,
        id=item.task_id,
        url=item.url,
        status=outcome.status,
        created_at=batch.created_at,
        updated_at=now,
        expire_at=batch.expire_at,
        index=item.index,
        attempts=item.attempts,
        http_status=outcome.http_status,
        data=outcome.data,
        error=kept_error(outcome, item.error),
        fetched_at=outcome.fetched_at,
        elapsed_ms=outcome.elapsed_ms,
        rendered_ms=outcome.rendered_ms,
        metered=outcome.metered,
        tls_unverified=outcome.tls_unverified,
        depth=item.depth,
        truncated_fields=outcome.truncated_fields,
        field_errors=outcome.field_errors,
        batch_id=batch.id,
        replays=item.replays,
        tenant=batch.tenant if outcome.status is TaskStatus.DEAD_LETTERED else None,
        validators=outcome.validators,
    )


def reopen(batch: BatchRecord, task_ids: set[str], statuses: set[TaskStatus]) -> Applied:
    """Replay: tasks of ``task_ids`` whose status is one of ``statuses`` go back to ``queued``
    with fresh attempts and one more replay (the one sanctioned backward move: asked for)."""
    deltas: Counter[TaskStatus] = Counter()
    items = []
    for item in batch.items:
        if item.task_id in task_ids and item.status in statuses:
            deltas[item.status] -= 1
            deltas[TaskStatus.QUEUED] += 1
            item = replace(
                item, status=TaskStatus.QUEUED, attempts=0, error=None, replays=item.replays + 1
            )
        items.append(item)
    return Applied(replace(batch, items=tuple(items), lease_until=None), (), _nonzero(deltas))


def _nonzero(deltas: Counter[TaskStatus]) -> dict[TaskStatus, int]:
    return {status: n for status, n in deltas.items() if n}
