"""Sharded per-job task counters.

Each task's counts live in one fixed shard (chosen from its id), so every shard's
``queued + running`` is the number of open tasks of that shard. A status change increments
the shard in the same write as the change and asks Firestore for the shard's resulting open
counts (``Increment(0)`` on the open fields: transform results carry the values after the
write). While that is above zero the job cannot be complete, and nobody reads the shards.
"""

from __future__ import annotations

import zlib
from collections import Counter
from collections.abc import Iterable, Sequence
from typing import Any

from google.cloud import firestore

from scrapejobs_shared.domain.records import TaskRecord
from scrapejobs_shared.domain.statuses import OPEN_TASK_STATUSES, TaskStatus

DEFAULT_COUNTER_SHARDS = 16
OPEN_FIELDS = tuple(sorted(status.value for status in OPEN_TASK_STATUSES))


class ShardedCounters:
    def __init__(self, client: firestore.AsyncClient, shards: int) -> None:
        self._client = client
        self._shards = shards

    def shard_of(self, task_id: str) -> int:
        return zlib.crc32(task_id.encode()) % self._shards

    def _shard(self, job_ref: Any, index: int) -> Any:
        return job_ref.collection("counters").document(str(index))

    def add_tasks(self, writer: Any, job_ref: Any, tasks: Iterable[TaskRecord]) -> None:
        """Stage the counts of new tasks (blind increments: no read, no lock)."""
        per_shard = Counter((self.shard_of(t.id), t.status) for t in tasks)
        shards: dict[int, dict[str, Any]] = {}
        for (shard, status), n in per_shard.items():
            shards.setdefault(shard, {})[status.value] = firestore.Increment(n)
        for shard, changes in shards.items():
            writer.set(self._shard(job_ref, shard), changes, merge=True)

    def move(
        self, writer: Any, job_ref: Any, task_id: str, old: TaskStatus, new: TaskStatus
    ) -> None:
        """Stage a status change; the write's transform results are the shard's open counts
        after it (see ``open_after``)."""
        changes: dict[str, Any] = {field: firestore.Increment(0) for field in OPEN_FIELDS}
        if old is not new:
            changes[old.value] = firestore.Increment(-1)
            changes[new.value] = firestore.Increment(1)
        writer.set(self._shard(job_ref, self.shard_of(task_id)), changes, merge=True)

    @staticmethod
    def open_after(write_result: Any, old: TaskStatus, new: TaskStatus) -> int:
        """Open tasks left in the shard, from the transform results of ``move``'s write
        (the client orders field transforms by field path)."""
        fields = sorted({*OPEN_FIELDS, old.value, new.value})
        values = dict(zip(fields, write_result.transform_results, strict=True))
        return sum(int(values[field].integer_value) for field in OPEN_FIELDS)

    async def read(self, job_ref: Any) -> dict[TaskStatus, int]:
        refs: Sequence[Any] = [self._shard(job_ref, n) for n in range(self._shards)]
        counts = dict.fromkeys(TaskStatus, 0)
        async for snap in self._client.get_all(refs):
            for status, value in (snap.to_dict() or {}).items():
                if status in counts:
                    counts[TaskStatus(status)] += int(value)
        return counts
