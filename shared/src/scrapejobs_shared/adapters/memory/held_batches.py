"""In-memory HeldBatches over the memory twin's batches (the contract suite runs it beside
Firestore's)."""

from __future__ import annotations

from dataclasses import replace
from datetime import datetime

from scrapejobs_shared.adapters.memory.job_store import MemoryJobStore
from scrapejobs_shared.delivery.batching import batch_group
from scrapejobs_shared.domain.records import BatchRecord


class MemoryHeldBatches:
    def __init__(self, store: MemoryJobStore) -> None:
        self._store = store

    async def release(
        self, job_id: str, group: str | None, now: datetime, limit: int
    ) -> list[BatchRecord]:
        batches = self._store.batches.get(job_id, {})
        released: list[BatchRecord] = []
        for batch_id in sorted(batches):
            batch = batches[batch_id]
            if len(released) >= limit:
                break
            if batch.held and (group is None or batch_group(batch) == group):
                batches[batch_id] = replace(batch, held=False, updated_at=now)
                released.append(batches[batch_id])
        return released

    async def stalled_holds(self, updated_before: datetime, limit: int) -> list[tuple[str, str]]:
        stalled: list[tuple[str, str]] = []
        looked = 0
        for job_id, batches in self._store.batches.items():
            for batch in batches.values():
                when = batch.updated_at or batch.created_at
                if not batch.held or when >= updated_before or looked >= limit:
                    continue
                looked += 1
                group = batch_group(batch)
                active = any(
                    not b.held and b.open_items and batch_group(b) == group
                    for b in batches.values()
                )
                if not active and (job_id, group) not in stalled:
                    stalled.append((job_id, group))
        return stalled
