"""Sharded per-job task counters: each change goes to one random shard; reads sum the shards."""

from __future__ import annotations

import random
from collections.abc import Mapping
from typing import Any

from google.cloud import firestore

from scrapejobs_shared.statuses import TaskStatus

DEFAULT_COUNTER_SHARDS = 16


class ShardedCounters:
    def __init__(self, client: firestore.AsyncClient, shards: int) -> None:
        self._client = client
        self._shards = shards

    def _shard(self, job_ref: Any, index: int | None = None) -> Any:
        number = random.randrange(self._shards) if index is None else index
        return job_ref.collection("counters").document(str(number))

    def add(self, writer: Any, job_ref: Any, deltas: Mapping[TaskStatus, int]) -> None:
        """Stage increments in a batch or transaction (blind writes: no read, no lock)."""
        changes = {status.value: firestore.Increment(n) for status, n in deltas.items() if n}
        if changes:
            writer.set(self._shard(job_ref), changes, merge=True)

    def move(self, writer: Any, job_ref: Any, old: TaskStatus, new: TaskStatus) -> None:
        if old is not new:
            self.add(writer, job_ref, {old: -1, new: 1})

    async def read(self, job_ref: Any) -> dict[TaskStatus, int]:
        refs = [self._shard(job_ref, n) for n in range(self._shards)]
        counts = dict.fromkeys(TaskStatus, 0)
        async for snap in self._client.get_all(refs):
            for status, value in (snap.to_dict() or {}).items():
                if status in counts:
                    counts[TaskStatus(status)] += int(value)
        return counts
