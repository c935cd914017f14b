"""HeldBatches on Firestore: the job's ``batches`` with ``held`` true (and their ``group``),
released by a write guarded by the update time read with them, so two releases racing never
release one batch twice; the stalled chains by a collection-group query (``held``,
``updated_at``: the composite index Terraform declares) and one small query per chain."""

from __future__ import annotations

from datetime import datetime
from typing import Any

from google.api_core import exceptions as gexc
from google.cloud import firestore
from google.cloud.firestore_v1.base_query import FieldFilter

from scrapejobs_shared.adapters.firestore.call_deadline import CallDeadline, reports_outages
from scrapejobs_shared.adapters.firestore.codec import batch_from_doc
from scrapejobs_shared.domain.records import BatchRecord
from scrapejobs_shared.observability.store_ops import count

LOST_RACE = (gexc.FailedPrecondition, gexc.NotFound)
RACE_SLACK = 2  # held batches read beyond those wanted: the next ones when a race is lost
RACE_ROUNDS = 3  # reads of one release, when every candidate of a read was taken by others


@reports_outages
class FirestoreHeldBatches:
    def __init__(self, client: firestore.AsyncClient, deadline: CallDeadline | None = None) -> None:
        self._client = client
        self._jobs = client.collection("jobs")
        self._deadline = deadline or CallDeadline()

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

    async def _held(self, job_id: str, group: str | None, limit: int) -> list[Any]:
        query: Any = self._jobs.document(job_id).collection("batches")
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
        guard = self._client.write_option(last_update_time=snap.update_time)
        count(writes=1)
        try:
            await snap.reference.update(fields, option=guard, **self._deadline.call)
        except LOST_RACE:
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
                self._jobs.document(job_id)
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
