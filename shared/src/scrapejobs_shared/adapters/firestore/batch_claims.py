"""Claims of batches on Firestore: a batch document's claim (a read, then a commit guarded by
its update time, with its counter shard's move) and the claim of a job that holds its batch
(batch_in_job.py: one write of the job document, without a read given the claim token)."""

from __future__ import annotations

from typing import Any

from google.api_core import exceptions as gexc

from scrapejobs_shared.adapters.firestore import plain_writes
from scrapejobs_shared.adapters.firestore.batch_in_job import (
    FirstClaim,
    claim_updates,
    first_claim,
    held_batch,
    room_in,
)
from scrapejobs_shared.adapters.firestore.call_deadline import reports_outages
from scrapejobs_shared.adapters.firestore.codec import batch_fields, batch_from_doc
from scrapejobs_shared.adapters.firestore.store_base import (
    CLAIM_RETRIES,
    ClaimHandle,
    FirestoreStoreBase,
    reserved,
)
from scrapejobs_shared.domain import batch_transitions
from scrapejobs_shared.domain.records import BatchRecord
from scrapejobs_shared.domain.statuses import JobStatus
from scrapejobs_shared.observability.store_ops import count
from scrapejobs_shared.ports.batch_store import (
    AlreadyDone,
    BatchClaim,
    Busy,
    Claimed,
    ClaimResult,
    Missing,
)


@reports_outages
class FirestoreBatchClaims(FirestoreStoreBase):
    async def claim_batch(self, claim: BatchClaim) -> ClaimResult:
        """Optimistic: one read, then a commit guarded by the batch's update time (a lost race
        reads again). The commit's counter write reports the job's cancel mark, so a cancel
        that committed before the claim is always seen. A job that holds its batch: see
        ``_claim_in_job``."""
        job_id, batch_id, now = claim.job_id, claim.batch_id, claim.now
        if reserved(job_id) or reserved(batch_id):
            return Missing()
        token = claim.claim_token
        first = None if token is None else first_claim(job_id, batch_id, token)
        if first is not None:
            return await self._claim_in_job(claim, first)
        job_ref = self._job_ref(job_id)
        ref = self._batch_ref(job_ref, batch_id)
        for _ in range(CLAIM_RETRIES):
            count(reads=1)
            snap = await ref.get(**self._deadline.call)
            if not snap.exists:  # or held by its job
                return await self._claim_in_job(claim, None)
            doc = snap.to_dict()
            batch = batch_from_doc(job_id, batch_id, doc)
            if not batch.open_items:
                return AlreadyDone()
            if batch.lease_until is not None and batch.lease_until > now:
                return Busy(batch.lease_until)
            applied = batch_transitions.claim(batch, claim.lease_until, claim.lane)
            shard = int(doc.get("shard") or 0)
            commit = self._client.batch()
            guard = self._client.write_option(last_update_time=snap.update_time)
            commit.update(ref, batch_fields(applied.batch, now), option=guard)
            starts = claim.mark_started and all(item.attempts == 0 for item in batch.items)
            self._counters.move(
                commit,
                job_ref,
                shard,
                applied.deltas,
                batch.expire_at,
                started_at=now if starts else None,  # kept on the shard: no job write
            )
            count(writes=2)
            try:
                results = await commit.commit(**self._deadline.call)
            except gexc.FailedPrecondition:
                continue  # another delivery changed the batch since our read
            after = self._counters.after(results[1], applied.deltas)
            handle = ClaimHandle(applied.batch, shard, results[0].update_time)
            return Claimed(applied.batch, after.cancelled, handle)
        return Busy(now)

    async def _claim_in_job(self, claim: BatchClaim, first: FirstClaim | None) -> ClaimResult:
        """The claim of a job that holds its batch: one write of the job document, guarded by
        its update time: the creation's (``first``, from the claim token: no read), else a
        read's. The job's status is in the document itself, so a cancel is always seen."""
        job_id, batch_id, now = claim.job_id, claim.batch_id, claim.now
        ref = self._job_ref(job_id)
        for attempt in range(CLAIM_RETRIES):
            if first is not None and attempt == 0:
                update_time, status, batch = first.update_time, first.status, first.batch
                started_at, room = None, first.room
            else:
                count(reads=1)
                snap = await ref.get(**self._deadline.call)
                doc = snap.to_dict() if snap.exists else None
                held = held_batch(job_id, batch_id, doc)
                if doc is None or held is None:
                    return Missing()
                update_time, status, batch = snap.update_time, JobStatus(doc["status"]), held
                started_at, room = doc.get("started_at"), room_in(doc)
            if not batch.open_items:
                return AlreadyDone()
            if batch.lease_until is not None and batch.lease_until > now:
                return Busy(batch.lease_until)
            applied = batch_transitions.claim(batch, claim.lease_until, claim.lane)
            commit = self._client.batch()
            updates = claim_updates(applied.batch, status, started_at, now)
            plain_writes.stage_update(commit, self._client, ref, updates, update_time)
            count(writes=1)
            try:
                [written] = await commit.commit(**self._deadline.call)
            except gexc.FailedPrecondition:
                continue  # written since the token or the read: read (again)
            except gexc.NotFound:
                return Missing()
            return claimed_in_job(applied.batch, status, written.update_time, room)
        return Busy(now)


def claimed_in_job(batch: BatchRecord, status: JobStatus, update_time: Any, room: int) -> Claimed:
    """The claim of a job that holds its batch, written at ``update_time`` over ``status``."""
    now_status = JobStatus.RUNNING if status is JobStatus.QUEUED else status
    handle = ClaimHandle(batch, 0, update_time, now_status, room)
    return Claimed(batch, status is JobStatus.CANCELLED, handle)
