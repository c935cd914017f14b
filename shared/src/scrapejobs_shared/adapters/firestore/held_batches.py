"""HeldBatches on Firestore: the job's ``batches`` with ``held`` true (and their ``group``),
released by a write guarded by the update time read with them, so two releases racing never
release one batch twice; the stalled chains by a collection-group query (``held``,
``updated_at``: the composite index Terraform declares) and one small query per chain.
Waiting batches carry ``wait_until`` (and ``wait_deferrals``), woken the same guarded way; the
overdue ones by a collection-group query on ``wait_until`` (its single-field index Terraform
declares)."""

from __future__ import annotations

from dataclasses import replace
from datetime import UTC, datetime
from typing import Any

from google.api_core import exceptions as gexc
from google.cloud.firestore_v1.base_query import FieldFilter

from scrapejobs_shared.adapters.firestore.batch_in_job import BATCH, batch_in, held_batch
from scrapejobs_shared.adapters.firestore.call_deadline import reports_outages
from scrapejobs_shared.adapters.firestore.codec import batch_from_doc
from scrapejobs_shared.adapters.firestore.collection_adapter import CollectionAdapter
from scrapejobs_shared.domain.records import BatchRecord
from scrapejobs_shared.observability.store_ops import count

LOST_RACE = (gexc.FailedPrecondition, gexc.NotFound)
RACE_SLACK = 2  # held batches read beyond those wanted: the next ones when a race is lost
RACE_ROUNDS = 3  # reads of one release, when every candidate of a read was taken by others
EPOCH = datetime(1970, 1, 1, tzinfo=UTC)  # before any wait: ``wait_until > EPOCH`` is waiting


@reports_outages
class FirestoreHeldBatches(CollectionAdapter):
    collection = "jobs"

    async def release(
        self, job_id: str, group: str | None, now: datetime, limit: int
    ) -> list[BatchRecord]:
        """Up to ``limit`` held batches, in id order. A batch another release took first is
        passed over for the next one (a read after a lost race holds ``RACE_SLACK`` spare
        candidates, and is made again while every candidate was taken): two releases racing
        release two batches, so a job's window never narrows. Without a race, one read of
        ``limit`` documents."""
        released: list[BatchRecord] = []
        for round_ in range(RACE_ROUNDS):
            wanted = limit - len(released)
            asked = wanted + (RACE_SLACK if round_ else 0)
            snaps = await self._held(job_id, group, asked)
            for snap in snaps:
                if len(released) >= limit:
                    return released
                batch = await self._release(job_id, snap, now)
                if batch is not None:
                    released.append(batch)
            if len(released) >= limit or len(snaps) < asked:
                break  # enough, or no held batch is left beyond those tried
        return released

    async def release_to_window(
        self, job_id: str, group: str, window: int, now: datetime
    ) -> list[BatchRecord]:
        """The group's active batches read (up to ``window``), then the rest released."""
        query = (
            self._collection.document(job_id)
            .collection("batches")
            .where(filter=FieldFilter("group", "==", group))
            .where(filter=FieldFilter("active", "==", True))
            .limit(window)
        )
        active = [snap async for snap in query.stream(**self._deadline.call)]
        count(reads=max(1, len(active)))
        if len(active) >= window:
            return []
        return await self.release(job_id, group, now, window - len(active))

    async def _held(self, job_id: str, group: str | None, limit: int) -> list[Any]:
        query: Any = self._collection.document(job_id).collection("batches")
        query = query.where(filter=FieldFilter("held", "==", True))
        if group is not None:
            query = query.where(filter=FieldFilter("group", "==", group))
        query = query.order_by("__name__").limit(limit)
        snaps = [snap async for snap in query.stream(**self._deadline.call)]
        count(reads=max(1, len(snaps)))
        return snaps

    async def _release(self, job_id: str, snap: Any, now: datetime) -> BatchRecord | None:
        """``snap``'s batch released, or None when another release took it first."""
        doc = snap.to_dict() or {}
        fields = {"held": False, "active": int(doc.get("open") or 0) > 0, "updated_at": now}
        if not await self._unless_written(snap, snap.reference, fields):
            return None
        return batch_from_doc(job_id, snap.id, doc | fields)

    async def stalled_holds(self, updated_before: datetime, limit: int) -> list[tuple[str, str]]:
        query = (
            self._client.collection_group("batches")
            .where(filter=FieldFilter("held", "==", True))
            .where(filter=FieldFilter("updated_at", "<", updated_before))
            .limit(limit)
        )
        snaps = [snap async for snap in query.stream(**self._deadline.call)]
        count(reads=max(1, len(snaps)))
        chains = {(s.reference.parent.parent.id, str(s.get("group") or "")) for s in snaps}
        stalled = []
        for job_id, group in sorted(chains):
            active = (
                self._collection.document(job_id)
                .collection("batches")
                .where(filter=FieldFilter("group", "==", group))
                .where(filter=FieldFilter("active", "==", True))
                .limit(1)
            )
            found = [snap async for snap in active.stream(**self._deadline.call)]
            count(reads=1)
            if not found:
                stalled.append((job_id, group))
        return stalled

    async def wait(
        self, batch: BatchRecord, until: datetime, deferrals: int, now: datetime
    ) -> bool:
        ref = self._collection.document(batch.job_id).collection("batches").document(batch.id)
        fields = {"wait_until": until, "wait_deferrals": deferrals, "active": False}
        count(writes=1)
        try:
            await ref.update(fields | {"updated_at": now}, **self._deadline.call)
        except gexc.NotFound:  # a batch its job's document holds has no document of its own
            return await self._wait_in_job(batch, fields | {"updated_at": now})
        return True

    async def _wait_in_job(self, batch: BatchRecord, fields: dict[str, Any]) -> bool:
        job_ref = self._collection.document(batch.job_id)
        count(reads=1)
        snap = await job_ref.get(**self._deadline.call)
        if held_batch(batch.job_id, batch.id, snap.to_dict()) is None:
            return False  # gone
        return await self._unless_written(snap, job_ref, _in_job(fields))

    async def wake(self, job_id: str, batch_id: str | None, now: datetime) -> list[BatchRecord]:
        batches = self._collection.document(job_id).collection("batches")
        if batch_id is not None:
            count(reads=1)
            snap = await batches.document(batch_id).get(**self._deadline.call)
            snaps = [snap] if snap.exists else []
        else:
            query = batches.where(filter=FieldFilter("wait_until", ">", EPOCH))
            snaps = [snap async for snap in query.stream(**self._deadline.call)]
            count(reads=max(1, len(snaps)))
        if not snaps:  # none, or its job's document holds it
            return await self._wake_in_job(job_id, batch_id, now)
        woken = []
        for snap in snaps:
            doc = snap.to_dict() or {}
            if doc.get("wait_until") is None:
                continue
            fields = {"wait_until": None, "active": int(doc.get("open") or 0) > 0}
            # another wake, or a delivery, wrote it first: not this wake's
            if await self._unless_written(snap, snap.reference, fields | {"updated_at": now}):
                woken.append(batch_from_doc(job_id, snap.id, doc | fields))
        return woken

    async def _wake_in_job(
        self, job_id: str, batch_id: str | None, now: datetime
    ) -> list[BatchRecord]:
        job_ref = self._collection.document(job_id)
        count(reads=1)
        snap = await job_ref.get(**self._deadline.call)
        batch = batch_in(job_id, snap.to_dict())
        if batch is None or batch.wait_until is None or batch_id not in (None, batch.id):
            return []
        fields = {"wait_until": None, "active": bool(batch.open_items), "updated_at": now}
        if not await self._unless_written(snap, job_ref, _in_job(fields)):
            return []
        return [replace(batch, wait_until=None, updated_at=now)]

    async def _unless_written(self, snap: Any, ref: Any, fields: dict[str, Any]) -> bool:
        """Update ``ref`` unless it was written since ``snap`` was read (then False)."""
        guard = self._client.write_option(last_update_time=snap.update_time)
        count(writes=1)
        try:
            await ref.update(fields, option=guard, **self._deadline.call)
        except LOST_RACE:
            return False
        return True

    async def overdue(self, before: datetime, limit: int) -> list[tuple[str, str]]:
        """Batch documents (a collection-group query) and batches jobs hold (a query of jobs)."""
        late = (
            self._client.collection_group("batches")
            .where(filter=FieldFilter("wait_until", "<", before))
            .limit(limit)
        )
        found = [
            (snap.reference.parent.parent.id, snap.id)
            async for snap in late.stream(**self._deadline.call)
        ]
        count(reads=max(1, len(found)))
        if len(found) < limit:
            in_jobs = self._collection.where(filter=FieldFilter(f"{BATCH}.wait_until", "<", before))
            in_jobs = in_jobs.limit(limit - len(found))
            held = [snap async for snap in in_jobs.stream(**self._deadline.call)]
            count(reads=max(1, len(held)))
            found += [(snap.id, str(snap.get(f"{BATCH}.id"))) for snap in held]
        return found


def _in_job(fields: dict[str, Any]) -> dict[str, Any]:
    """A batch document's ``fields`` as their paths in a job document that holds it."""
    return {f"{BATCH}.{name}": value for name, value in fields.items()}
