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

    async def release_to_window(
        self, job_id: str, group: str, window: int, now: datetime
    ) -> list[BatchRecord]:
        batches = self._store.batches.get(job_id, {}).values()
        active = sum(1 for batch in batches if batch.active and batch_group(batch) == group)
        if active >= window:
            return []
        return await self.release(job_id, group, now, window - active)

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
                active = any(b.active and batch_group(b) == group for b in batches.values())
                if not active and (job_id, group) not in stalled:
                    stalled.append((job_id, group))
        return stalled

    async def wait(
        self, batch: BatchRecord, until: datetime, deferrals: int, now: datetime
    ) -> bool:
        batches = self._store.batches.get(batch.job_id, {})
        current = batches.get(batch.id)
        if current is None:
            return False
        batches[batch.id] = replace(
            current, wait_until=until, wait_deferrals=deferrals, updated_at=now
        )
        return True

    async def wake(self, job_id: str, batch_id: str | None, now: datetime) -> list[BatchRecord]:
        batches = self._store.batches.get(job_id, {})
        woken: list[BatchRecord] = []
        for key in sorted(batches) if batch_id is None else [batch_id]:
            batch = batches.get(key)
            if batch is not None and batch.wait_until is not None:
                batches[key] = replace(batch, wait_until=None, updated_at=now)
                woken.append(batches[key])
        return woken

    async def overdue(self, before: datetime, limit: int) -> list[tuple[str, str]]:
        late = [
            (batch.wait_until, job_id, batch.id)
            for job_id, batches in self._store.batches.items()
            for batch in batches.values()
            if batch.wait_until is not None and batch.wait_until < before
        ]
        return [(job_id, batch_id) for _, job_id, batch_id in sorted(late)[:limit]]
