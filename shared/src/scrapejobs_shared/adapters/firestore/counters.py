"""Sharded per-job task counters.

Each batch's tasks are counted in one fixed shard of its job (``jobs/{id}/counters/{n}``, the
shard recorded on the batch), changed in the same commit as the tasks' states, so counts always
sum to the number of tasks and no document takes more than its batches' commits. Each write
also asks Firestore for the shard's values after it (``Increment(0)``: transform results carry
the resulting values), which gives two things without a read:

* the shard's open count: while above zero the job cannot be complete;
* the job's cancel mark (``job_cancelled``), set on every shard by a cancel, so a claim or a
  settle that commits after a cancel always sees it.
"""

from __future__ import annotations

import random
from collections.abc import Mapping
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from google.cloud import firestore

from scrapejobs_shared.adapters.firestore.call_deadline import CallDeadline
from scrapejobs_shared.domain.job_tally import JobTally
from scrapejobs_shared.domain.statuses import OPEN_TASK_STATUSES, TaskStatus
from scrapejobs_shared.observability.store_ops import count

CANCEL_MARK = "job_cancelled"
STARTED_AT = "started_at"
OPEN_FIELDS = tuple(sorted(status.value for status in OPEN_TASK_STATUSES))


@dataclass(frozen=True, slots=True)
class ShardAfter:
    """A counter shard's values after a write."""

    open: int
    cancelled: bool


@dataclass(frozen=True, slots=True)
class ShardsRead:
    job_doc: dict[str, Any]
    counts: dict[TaskStatus, int]
    started_at: datetime | None  # the earliest start a shard keeps
    tally: JobTally  # the ai stage's usage and the uncharged pages, summed over the shards


class ShardedCounters:
    def __init__(self, client: firestore.AsyncClient, deadline: CallDeadline) -> None:
        self._client = client
        self._deadline = deadline

    @staticmethod
    def _shard(job_ref: Any, index: int) -> Any:
        return job_ref.collection("counters").document(str(index))

    def add(
        self,
        writer: Any,
        job_ref: Any,
        shard: int,
        deltas: Mapping[TaskStatus, int],
        expire_at: datetime,
        tally: JobTally | None = None,
    ) -> None:
        """Stage blind increments (new tasks, changes inside a transaction): no read, no
        lock. Every write carries the job's ``expire_at``, so TTL deletes the shard with the
        job."""
        changes: dict[str, Any] = {
            status.value: firestore.Increment(n) for status, n in deltas.items() if n
        }
        changes |= _tally_increments(tally)
        if changes:
            writer.set(self._shard(job_ref, shard), changes | {"expire_at": expire_at}, merge=True)

    def move(
        self,
        writer: Any,
        job_ref: Any,
        shard: int,
        deltas: Mapping[TaskStatus, int],
        expire_at: datetime,
        started_at: datetime | None = None,
        tally: JobTally | None = None,
    ) -> None:
        """Stage status changes; read the shard's values after it with ``after``.
        ``started_at``: the job's start, kept on the shard (a job no worker marks running:
        its status reads show it without a write to the job document)."""
        changes: dict[str, Any] = {name: firestore.Increment(0) for name in _watched()}
        if started_at is not None:
            changes[STARTED_AT] = started_at
        for status, n in deltas.items():
            if n:
                changes[status.value] = firestore.Increment(n)
        changes |= _tally_increments(tally)
        writer.set(self._shard(job_ref, shard), changes | {"expire_at": expire_at}, merge=True)

    @staticmethod
    def after(
        write_result: Any, deltas: Mapping[TaskStatus, int], tally: JobTally | None = None
    ) -> ShardAfter:
        """The shard's values from the transform results of ``move``'s write (the client
        orders field transforms by field path)."""
        fields = sorted(
            {
                *_watched(),
                *(status.value for status, n in deltas.items() if n),
                *_tally_increments(tally),
            }
        )
        values = dict(zip(fields, write_result.transform_results, strict=True))
        open_count = sum(int(values[name].integer_value) for name in OPEN_FIELDS)
        return ShardAfter(open_count, bool(int(values[CANCEL_MARK].integer_value)))

    async def cancel_mark(self, job_ref: Any, index: int) -> bool:
        """Whether shard ``index`` carries the job's cancel mark (one read)."""
        count(reads=1)
        snap = await self._shard(job_ref, index).get(
            field_paths=[CANCEL_MARK], **self._deadline.call
        )
        return bool(snap.exists and (snap.to_dict() or {}).get(CANCEL_MARK))

    def mark_cancelled(self, writer: Any, job_ref: Any, shards: int, expire_at: datetime) -> None:
        for index in range(shards):
            mark = {CANCEL_MARK: 1, "expire_at": expire_at}
            writer.set(self._shard(job_ref, index), mark, merge=True)

    async def read(self, job_ref: Any, shards: int) -> dict[TaskStatus, int]:
        refs = [self._shard(job_ref, n) for n in range(shards)]
        counts = dict.fromkeys(TaskStatus, 0)
        count(reads=len(refs))
        async for snap in self._client.get_all(refs, **self._deadline.call):
            for status, value in (snap.to_dict() or {}).items():
                if status in counts:
                    counts[TaskStatus(status)] += int(value)
        return counts

    async def read_with(self, job_ref: Any, shards: int) -> ShardsRead | None:
        """The job document, its counts and the start its shards keep, in one batched get;
        None if the job is gone."""
        refs = [job_ref, *(self._shard(job_ref, n) for n in range(shards))]
        counts = dict.fromkeys(TaskStatus, 0)
        job_doc: dict[str, Any] | None = None
        starts: list[datetime] = []
        tally = JobTally()
        count(reads=len(refs))
        async for snap in self._client.get_all(refs, **self._deadline.call):
            if snap.reference.path == job_ref.path:
                job_doc = snap.to_dict() if snap.exists else None
                continue
            doc = snap.to_dict() or {}
            for field, value in doc.items():
                if field in counts:
                    counts[TaskStatus(field)] += int(value)
                elif field == STARTED_AT and value is not None:
                    starts.append(value)
            tally = tally + JobTally.from_fields(doc)
        if job_doc is None:
            return None
        return ShardsRead(job_doc, counts, min(starts) if starts else None, tally)

    async def any_open(self, job_ref: Any, shards: int) -> bool:
        """Whether any shard has an open task, reading shards one at a time in random order and
        stopping at the first open one: while a job runs this is usually one read."""
        order = list(range(shards))
        random.shuffle(order)
        for index in order:
            count(reads=1)
            doc = (await self._shard(job_ref, index).get(**self._deadline.call)).to_dict() or {}
            if any(int(doc.get(name) or 0) for name in OPEN_FIELDS):
                return True
        return False


def _watched() -> tuple[str, ...]:
    return (*OPEN_FIELDS, CANCEL_MARK)


def _tally_increments(tally: JobTally | None) -> dict[str, Any]:
    if tally is None:
        return {}
    return {name: firestore.Increment(n) for name, n in tally.to_fields().items()}
