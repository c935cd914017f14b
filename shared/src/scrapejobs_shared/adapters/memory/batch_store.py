"""The memory twin's ``BatchStore`` (ports/batch_store.py): new batches, claims, settles,
closes and replays, with the same transitions as Firestore (domain/batch_transitions.py).

A bundle's claims (``claim_together``) are each claim alone, in order: a commit here is one step
under the lock, so together and alone decide the same; the Firestore adapter's single commit
(joint_claims.py there) is what saves round trips.
"""

from __future__ import annotations

from collections.abc import Collection, Sequence
from dataclasses import replace
from datetime import datetime

from scrapejobs_shared.adapters.memory.store_state import Handle, MemoryStoreState
from scrapejobs_shared.adapters.memory.workers import MemoryWorkers
from scrapejobs_shared.domain import batch_transitions
from scrapejobs_shared.domain.records import BatchRecord, TaskOutcome
from scrapejobs_shared.domain.statuses import JobStatus, TaskStatus
from scrapejobs_shared.domain.workers import WorkerBeat
from scrapejobs_shared.ports.batch_store import BatchClaim, JointClaim, joined
from scrapejobs_shared.ports.job_store import (
    AlreadyDone,
    Busy,
    Claimed,
    ClaimResult,
    Missing,
    Settled,
    TaskChange,
)


class MemoryBatchStore:
    def __init__(self, state: MemoryStoreState, workers: MemoryWorkers) -> None:
        self._state = state
        self._workers = workers

    async def add_batch(self, batch: BatchRecord, max_new: int | None = None) -> BatchRecord | None:
        state = self._state
        async with state.lock:
            if batch.job_id not in state.jobs:
                return None
            existing = state.batches[batch.job_id].get(batch.id)
            if existing is not None:
                return existing
            stored = state.batch_to_add(batch, max_new)
            if stored is None:
                return None
            state.batches[batch.job_id][batch.id] = stored
            state.added[batch.job_id] = state.added.get(batch.job_id, 0) + len(stored.items)
            state.mark_found(stored)
            return stored

    async def reopen(
        self,
        job_id: str,
        batch_id: str,
        task_ids: Sequence[str],
        statuses: frozenset[TaskStatus],
        now: datetime,
    ) -> BatchRecord | None:
        state = self._state
        async with state.lock:
            job = state.jobs.get(job_id)
            batch = state.batches.get(job_id, {}).get(batch_id)
            if job is None or batch is None or job.status is JobStatus.CANCELLED:
                return None
            wanted = set(task_ids)
            applied = batch_transitions.reopen(batch, wanted, set(statuses))
            if not applied.deltas:
                return None
            state.write(applied, now)
            queued = tuple(
                i
                for i in applied.batch.items
                if i.task_id in wanted and i.status is TaskStatus.QUEUED
            )
            state.mark_found(replace(applied.batch, items=queued))
            if job.status is JobStatus.COMPLETED:
                state.jobs[job_id] = replace(
                    job, status=JobStatus.RUNNING, updated_at=now, finished_at=None
                )
            return state.batches[job_id][batch_id]

    async def claim_batch(self, claim: BatchClaim) -> ClaimResult:
        job_id, batch_id, now = claim.job_id, claim.batch_id, claim.now
        state = self._state
        state.claim_tokens.append(claim.claim_token)
        async with state.lock:
            batch = state.batches.get(job_id, {}).get(batch_id)
            job = state.jobs.get(job_id)
            if batch is None or job is None:
                return Missing()
            if not batch.open_items:
                return AlreadyDone()
            if batch.lease_until is not None and batch.lease_until > now:
                return Busy(batch.lease_until)
            if job_id in state.held_jobs:  # the job's own document: running, started, published
                moved = replace(job, publishing=False)
                if job.status is JobStatus.QUEUED:
                    moved = replace(moved, status=JobStatus.RUNNING, updated_at=now)
                state.jobs[job_id] = replace(moved, started_at=job.started_at or now)
            elif claim.mark_started and all(item.attempts == 0 for item in batch.items):
                state.starts.setdefault(job_id, now)  # as Firestore keeps it: on the counts
            applied = batch_transitions.claim(batch, claim.lease_until, claim.lane)
            handle = state.write(applied, now)
            return Claimed(applied.batch, job.status is JobStatus.CANCELLED, handle)

    async def claim_together(
        self, claims: Sequence[JointClaim], now: datetime, lease_until: datetime
    ) -> list[ClaimResult]:
        return [await self.claim_batch(joined(c, now, lease_until)) for c in claims]

    async def settle(
        self,
        handle: object,
        changes: Sequence[TaskChange],
        now: datetime,
        lease_until: datetime | None = None,
        beat: WorkerBeat | None = None,
    ) -> Settled:
        assert isinstance(handle, Handle), "settle takes the handle of a claim"
        state = self._state
        if beat is not None:
            await self._workers.report(beat)
        async with state.lock:
            batch = state.batches.get(handle.job_id, {}).get(handle.batch_id)
            if batch is None:
                return Settled(handle, (), False, False)
            applied = batch_transitions.settle(batch, changes, now)
            if lease_until is not None:
                applied = replace(applied, batch=replace(applied.batch, lease_until=lease_until))
            settled = state.settled(applied, now)
            if handle.job_id in state.held_jobs and not applied.batch.open_items:
                return self._completed(settled, now)  # its one batch: no open task left
            if settled.finished or applied.batch.open_items:
                return settled
            # finished nothing, yet the batch is closed: a retry of a settle that landed
            open_left = any(b.open_items for b in state.batches[handle.job_id].values())
            return replace(settled, job_may_be_done=not open_left)

    async def cancel_heard(self, handle: object) -> bool:
        assert isinstance(handle, Handle), "cancel_heard takes the handle of a claim"
        job = self._state.jobs.get(handle.job_id)
        return job is not None and job.status is JobStatus.CANCELLED

    def _completed(self, settled: Settled, now: datetime) -> Settled:
        """A job that holds its batch, whose last task this settle closed: completed by the
        same write (while it runs)."""
        assert isinstance(settled.handle, Handle)
        job = self._state.jobs[settled.handle.job_id]
        if job.status not in (JobStatus.QUEUED, JobStatus.RUNNING):
            return replace(settled, job_may_be_done=True)
        done = replace(job, status=JobStatus.COMPLETED, updated_at=now, finished_at=now)
        self._state.jobs[job.id] = done
        return replace(settled, job_may_be_done=True, job_completed=True)

    async def close_batch(
        self,
        job_id: str,
        batch_id: str,
        outcome: TaskOutcome,
        now: datetime,
        statuses: Collection[TaskStatus] | None = None,
        spent_at: int | None = None,
    ) -> Settled | Busy | Missing:
        state = self._state
        async with state.lock:
            batch = state.batches.get(job_id, {}).get(batch_id)
            if batch is None:
                return Missing()
            if batch.lease_until is not None and batch.lease_until > now:
                return Busy(batch.lease_until)
            applied = batch_transitions.close(batch, outcome, now, statuses, spent_at)
            left = batch_transitions.closable(applied.batch, statuses)
            settled = state.settled(applied, now)
            return replace(settled, left_open=tuple(item.task_id for item in left))
