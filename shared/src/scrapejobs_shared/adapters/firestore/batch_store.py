"""Batches on Firestore after their claim (batch_claims.py): the commits that settle their tasks
(results, counts, page cache entries, handoffs, a worker's report, in one; the outcomes'
statistics are the process's to write: ``Settled.stats``), a
batch's close, replays and a crawl's new batches. See job_store.py for the layout of the
documents."""

from __future__ import annotations

import zlib
from collections.abc import Callable, Collection, Sequence
from dataclasses import replace
from datetime import datetime
from typing import Any

from google.api_core import exceptions as gexc
from google.cloud import firestore

from scrapejobs_shared.adapters.firestore import crawl_budget, plain_writes
from scrapejobs_shared.adapters.firestore.batch_in_job import (
    RESULT,
    Results,
    batch_updates,
    held_batch,
    place_results,
    room_in,
    settle_updates,
)
from scrapejobs_shared.adapters.firestore.call_deadline import reports_outages
from scrapejobs_shared.adapters.firestore.codec import (
    batch_fields,
    batch_from_doc,
    batch_to_doc,
    handoff_to_doc,
    task_to_doc,
)
from scrapejobs_shared.adapters.firestore.page_cache import stage_kept
from scrapejobs_shared.adapters.firestore.store_base import (
    HANDOFFS,
    ClaimHandle,
    FirestoreStoreBase,
    commit_guarded,
    guarded_rounds,
    marker,
    reserved,
)
from scrapejobs_shared.adapters.firestore.task_documents import RESULTS_AT_ROOT, TaskDocuments
from scrapejobs_shared.adapters.firestore.workers import FirestoreWorkerDirectory, stage_beat
from scrapejobs_shared.domain import batch_transitions
from scrapejobs_shared.domain.batch_transitions import Applied
from scrapejobs_shared.domain.records import (
    BatchRecord,
    TaskOutcome,
    TaskRecord,
)
from scrapejobs_shared.domain.statuses import JobStatus, TaskStatus
from scrapejobs_shared.domain.workers import WorkerBeat
from scrapejobs_shared.observability.store_ops import count
from scrapejobs_shared.ports.batch_store import (
    Busy,
    Missing,
    Settled,
    TaskChange,
)


@reports_outages
class FirestoreBatchStore(FirestoreStoreBase):
    async def add_batch(self, batch: BatchRecord, max_new: int | None = None) -> BatchRecord | None:
        """Read the job, the batch, its pages' markers and the budget's shards, then commit the
        batch, its new pages' markers (creates: a page found meanwhile fails it), the budget's
        counts (guarded) and its queued count (an increment). A failed guard reads again
        (``guarded_rounds``): a transaction would hold its reads' locks, and 10 crawl batches
        at once then timed out on the emulator's locks and some ended ``Contended``. Nothing
        guards the job's document: a job deleted between the read and the commit leaves the
        batch and its markers (as a transaction could: a recursive delete is not one) to their
        TTL (``expire_at``)."""
        job_ref = self._job_ref(batch.job_id)
        batch_ref = self._batch_ref(job_ref, batch.id)
        task_refs = [self._tasks.ref(batch.job_id, item.task_id) for item in batch.items]

        async def attempt() -> BatchRecord | None:
            refs = [job_ref, batch_ref, *task_refs]
            count(reads=len(refs))
            snaps = {
                snap.reference.path: snap
                async for snap in self._client.get_all(refs, **self._deadline.call)
            }
            job_snap, batch_snap = snaps[job_ref.path], snaps[batch_ref.path]
            if batch_snap.exists:
                return batch_from_doc(batch.job_id, batch.id, batch_snap.to_dict())
            if not job_snap.exists:
                return None
            markers = task_refs
            if not job_snap.get(RESULTS_AT_ROOT):  # a crawl older than the layout: its own
                markers = [self._tasks.legacy_ref(job_ref, i.task_id) for i in batch.items]
                count(reads=len(markers))
                async for snap in self._client.get_all(markers, **self._deadline.call):
                    snaps[snap.reference.path] = snap
            at = dict(zip((item.task_id for item in batch.items), markers, strict=True))
            fresh = [item for item in batch.items if not snaps[at[item.task_id].path].exists]
            shards = int(job_snap.get("counter_shards") or 1)
            taken: list[crawl_budget.Taken] = []
            if max_new is not None and fresh:
                taken = await crawl_budget.take(
                    job_ref, batch.id, len(fresh), max_new, shards, self._deadline.call
                )
                fresh = fresh[: sum(part.pages for part in taken)]
            if not fresh:
                return None
            stored = replace(batch, items=tuple(fresh))
            shard = _counted_on(batch.id, shards, taken)
            commit = self._client.batch()
            commit.create(batch_ref, batch_to_doc(stored, shard))
            for item in fresh:
                commit.create(at[item.task_id], marker(stored, item))
            budget = crawl_budget.stage(commit, self._client, taken, batch.expire_at)
            queued = {TaskStatus.QUEUED: len(fresh)}
            self._counters.add(commit, job_ref, shard, queued, batch.expire_at)
            count(writes=len(fresh) + 2 + budget)
            # Stale: the batch, a page or a budget shard, written meanwhile
            await commit_guarded(commit, self._deadline.call)
            return stored

        result: BatchRecord | None = await guarded_rounds(attempt)
        return result

    async def reopen(
        self,
        job_id: str,
        batch_id: str,
        task_ids: Sequence[str],
        statuses: frozenset[TaskStatus],
        now: datetime,
    ) -> BatchRecord | None:
        if reserved(job_id) or reserved(batch_id):
            return None
        job_ref = self._job_ref(job_id)
        ref = self._batch_ref(job_ref, batch_id)
        wanted = set(task_ids)

        @firestore.async_transactional
        async def run(transaction: Any) -> BatchRecord | None:
            count(reads=2)
            snaps = {
                snap.reference.path: snap
                async for snap in self._client.get_all(
                    [job_ref, ref], transaction=transaction, **self._deadline.call
                )
            }
            job_snap, batch_snap = snaps[job_ref.path], snaps[ref.path]
            if not job_snap.exists:
                return None
            held = held_batch(job_id, batch_id, job_snap.to_dict())
            if not batch_snap.exists and held is None:
                return None
            job_status = JobStatus(job_snap.get("status"))
            if job_status is JobStatus.CANCELLED:
                return None
            doc = batch_snap.to_dict() or {}
            batch = held or batch_from_doc(job_id, batch_id, doc)
            applied = batch_transitions.reopen(batch, wanted, set(statuses))
            if not applied.deltas:
                return None
            back = job_status is JobStatus.COMPLETED  # the job runs again
            self._stage_reopened(transaction, job_ref, doc, applied, held is not None, back, now)
            reopened = [i for i in applied.batch.items if i.task_id in wanted]
            for item in reopened:
                if item.status is TaskStatus.QUEUED:
                    task_ref = self._tasks.of(job_ref, job_snap.to_dict(), item.task_id)
                    transaction.set(task_ref, marker(applied.batch, item))
            count(writes=3 + len(reopened))
            return applied.batch

        result: BatchRecord | None = await self._in_transaction(run)
        return result

    def _stage_reopened(
        self,
        transaction: Any,
        job_ref: Any,
        doc: dict[str, Any],
        applied: Applied,
        in_job: bool,
        back: bool,
        now: datetime,
    ) -> None:
        """A replay's write of the batch and its counts (and the job's, back to running)."""
        running = {"status": JobStatus.RUNNING.value, "updated_at": now} if back else {}
        if in_job:  # the job's own document: its counts are its batch's; no result inside
            gone = {RESULT: firestore.DELETE_FIELD}
            transaction.update(job_ref, batch_updates(applied.batch, now) | running | gone)
            return
        transaction.update(
            self._batch_ref(job_ref, applied.batch.id), batch_fields(applied.batch, now)
        )
        shard = int(doc.get("shard") or 0)
        self._counters.add(transaction, job_ref, shard, applied.deltas, applied.batch.expire_at)
        if running:
            transaction.update(job_ref, running)

    async def settle(
        self,
        handle: object,
        changes: Sequence[TaskChange],
        now: datetime,
        lease_until: datetime | None = None,
        beat: WorkerBeat | None = None,
    ) -> Settled:
        assert isinstance(handle, ClaimHandle), "settle takes the handle of a claim"
        if handle.token is not None:
            applied = batch_transitions.settle(handle.batch, changes, now)
            if lease_until is not None:
                applied = with_lease(applied, lease_until)
            try:
                return await self._commit_settled(handle, applied, now, beat)
            except gexc.FailedPrecondition:
                pass  # something else wrote the batch: decide inside a transaction
        settled = await self._settle_in_transaction(handle, changes, now, lease_until)
        if beat is not None:  # rare: the report on its own
            await FirestoreWorkerDirectory(self._client, self._deadline).report(beat)
        return settled

    async def cancel_heard(self, handle: object) -> bool:
        """The job's document for a job that holds its batch, else the batch's counter shard
        (a cancel marks every shard): one read."""
        assert isinstance(handle, ClaimHandle), "cancel_heard takes the handle of a claim"
        job_ref = self._job_ref(handle.batch.job_id)
        if not handle.in_job:
            return await self._counters.cancel_mark(job_ref, handle.shard)
        count(reads=1)
        snap = await job_ref.get(field_paths=["status"], **self._deadline.call)
        return bool(snap.exists and snap.get("status") == JobStatus.CANCELLED.value)

    async def _commit_settled(
        self, handle: ClaimHandle, applied: Applied, now: datetime, beat: WorkerBeat | None
    ) -> Settled:
        """A claimed batch's settle in one commit guarded by its handle's update time (a lost
        guard fails it: ``FailedPrecondition``), with its page cache entries, handoffs and the
        worker's report."""
        commit = self._client.batch()
        written = self._stage_settle(commit, handle, applied, now)
        written += self._stage_handoffs(commit, self._job_ref(handle.batch.job_id), applied)
        written += stage_kept(commit, self._client, applied.kept, now)
        if beat is not None:  # last: the results' order above is what is read back
            stage_beat(commit, self._client, beat)
        count(writes=written + (beat is not None))
        return self._settled(handle, applied, await commit.commit(**self._deadline.call))

    def _stage_settle(
        self, commit: Any, handle: ClaimHandle, applied: Applied, now: datetime
    ) -> int:
        """A settle's own documents (its batch and counter shard, or its job's document, and
        its results), guarded by the handle; how many. The first is the guarded one."""
        job_ref = self._job_ref(handle.batch.job_id)
        if handle.in_job:  # the job's document, and its completion when this closes it
            placed = place_results(applied.batch, applied.results, handle.room)
            completes = _completes(handle, applied)
            return self._stage_in_job(
                commit, job_ref, applied, placed, completes, now, handle.token
            )
        guard = self._client.write_option(last_update_time=handle.token)
        ref = self._batch_ref(job_ref, handle.batch.id)
        commit.update(ref, batch_fields(applied.batch, now), option=guard)
        self._counters.move(
            commit,
            job_ref,
            handle.shard,
            applied.deltas,
            applied.batch.expire_at,
            tally=applied.tally,
        )
        _stage_results(commit, self._tasks, applied.results)
        return 2 + len(applied.results)

    def _stage_in_job(
        self,
        writer: Any,
        job_ref: Any,
        applied: Applied,
        placed: Results,
        completes: bool,
        now: datetime,
        last_update_time: Any = None,
    ) -> int:
        """A settle of a job that holds its batch: the job's document (its result inside, when
        kept there), guarded by ``last_update_time`` (else by its existence), the other
        results' task documents; how many documents that writes."""
        changes = settle_updates(applied.batch, applied.tally, completes, now, placed.inside)
        plain_writes.stage_update(writer, self._client, job_ref, changes, last_update_time)
        _stage_results(writer, self._tasks, placed.apart)
        for task_id in placed.outdated:
            writer.delete(self._tasks.ref(job_ref.id, task_id))
        return 1 + len(placed.apart) + len(placed.outdated)

    def _settled(self, handle: ClaimHandle, applied: Applied, results: Sequence[Any]) -> Settled:
        """What a committed settle did, from its own write results (``_stage_settle``'s)."""
        finished = applied.finished
        if handle.in_job:
            completes = _completes(handle, applied)
            status = JobStatus.COMPLETED if completes else handle.job_status
            written = ClaimHandle(applied.batch, 0, results[0].update_time, status, handle.room)
            cancelled = handle.job_status is JobStatus.CANCELLED
            closed = not applied.batch.open_items  # its one batch: no open task left
            done = _outcomes(applied)
            return Settled(written, finished, cancelled, closed, job_completed=completes, **done)
        after = self._counters.after(results[1], applied.deltas, applied.tally)
        return Settled(
            ClaimHandle(applied.batch, handle.shard, results[0].update_time),
            finished,
            after.cancelled,
            bool(applied.finished) and after.open == 0,
            **_outcomes(applied),
        )

    async def _settle_in_transaction(
        self,
        handle: ClaimHandle,
        changes: Sequence[TaskChange],
        now: datetime,
        lease_until: datetime | None,
    ) -> Settled:
        batch = handle.batch

        def apply(current: BatchRecord) -> Applied | None:
            applied = batch_transitions.settle(current, changes, now)
            return with_lease(applied, lease_until) if lease_until is not None else applied

        settled = await self._transact(batch.job_id, batch.id, apply, now)
        if settled is None:  # the batch is gone (a deleted job)
            return Settled(handle, (), False, False)
        return _maybe_done_if_closed(settled)

    async def close_batch(
        self,
        job_id: str,
        batch_id: str,
        outcome: TaskOutcome,
        now: datetime,
        statuses: Collection[TaskStatus] | None = None,
        spent_at: int | None = None,
    ) -> Settled | Busy | Missing:
        if reserved(job_id) or reserved(batch_id):
            return Missing()
        busy: list[Busy] = []
        left: list[tuple[str, ...]] = []  # of the transaction's last attempt

        def apply(current: BatchRecord) -> Applied | None:
            if current.lease_until is not None and current.lease_until > now:
                busy.append(Busy(current.lease_until))
                return None
            applied = batch_transitions.close(current, outcome, now, statuses, spent_at)
            left.append(
                tuple(i.task_id for i in batch_transitions.closable(applied.batch, statuses))
            )
            return applied

        settled = await self._transact(job_id, batch_id, apply, now)
        if busy:
            return busy[-1]
        if settled is None:
            return Missing()
        return replace(settled, left_open=left[-1]) if left else settled

    def _stage_handoffs(self, writer: Any, job_ref: Any, applied: Applied) -> int:
        """Store the handoffs a settle made, drop those of tasks the processing lane
        finished; how many writes that staged."""
        handoffs = job_ref.collection(HANDOFFS)
        expire_at = applied.batch.expire_at
        for task_id, handoff in applied.handoffs:
            writer.set(handoffs.document(task_id), handoff_to_doc(handoff, expire_at))
        for task_id in applied.handoffs_done:
            writer.delete(handoffs.document(task_id))
        return len(applied.handoffs) + len(applied.handoffs_done)

    async def _transact(
        self,
        job_id: str,
        batch_id: str,
        apply: Callable[[BatchRecord], Applied | None],
        now: datetime,
    ) -> Settled | None:
        """Read the batch in a transaction, apply ``apply(batch) -> Applied | None``, write."""
        job_ref = self._job_ref(job_id)
        ref = self._batch_ref(job_ref, batch_id)

        @firestore.async_transactional
        async def run(transaction: Any) -> tuple[Applied, int, bool] | None:
            count(reads=1)
            snap = await ref.get(transaction=transaction, **self._deadline.call)
            held, room = None, 0
            if not snap.exists:  # or held by its job
                count(reads=1)
                job_snap = await job_ref.get(transaction=transaction, **self._deadline.call)
                held = held_batch(job_id, batch_id, job_snap.to_dict())
                if held is None:
                    return None
                room = room_in(job_snap.to_dict())
            doc = {} if held is not None else snap.to_dict()
            applied = apply(held or batch_from_doc(job_id, batch_id, doc))
            if applied is None:
                return None
            shard = int(doc.get("shard") or 0)
            if held is not None:  # completed by the caller's completion check
                placed = place_results(applied.batch, applied.results, room)
                documents = self._stage_in_job(transaction, job_ref, applied, placed, False, now)
            else:
                transaction.update(ref, batch_fields(applied.batch, now))
                self._counters.add(
                    transaction,
                    job_ref,
                    shard,
                    applied.deltas,
                    applied.batch.expire_at,
                    applied.tally,
                )
                _stage_results(transaction, self._tasks, applied.results)
                documents = 2 + len(applied.results)
            handoffs = self._stage_handoffs(transaction, job_ref, applied)
            kept = stage_kept(transaction, self._client, applied.kept, now)
            count(writes=documents + handoffs + kept)
            return applied, shard, held is not None

        outcome = await self._in_transaction(run)
        if outcome is None:
            return None
        applied, shard, in_job = outcome
        job = await self.get_job(job_id)
        cancelled = job is not None and job.status is JobStatus.CANCELLED
        status = (job.status if job is not None else JobStatus.CANCELLED) if in_job else None
        return Settled(
            ClaimHandle(applied.batch, shard, None, status),
            applied.finished,
            cancelled,
            bool(applied.finished),
            **_outcomes(applied),
        )


def _outcomes(applied: Applied) -> dict[str, Any]:
    """A settle's outcomes for the process's statistics (``Settled.stats``)."""
    batch = applied.batch
    return {"stats": applied.stats, "tenant": batch.tenant, "batch_closed": not batch.open_items}


_RUNNABLE = (JobStatus.QUEUED, JobStatus.RUNNING)  # a job its last task's settle completes


def _completes(handle: ClaimHandle, applied: Applied) -> bool:
    """Whether a settle of a job that holds its batch completes the job: it closes the last
    open task of a job that runs."""
    return handle.in_job and not applied.batch.open_items and handle.job_status in _RUNNABLE


def _maybe_done_if_closed(settled: Settled) -> Settled:
    """A settle that leaves its batch with no open task may have closed the job even when it
    finished nothing itself: an earlier commit of the same changes may have landed though its
    caller saw an error (a timeout under load), and this is the retry that follows."""
    assert isinstance(settled.handle, ClaimHandle)
    if settled.job_may_be_done or settled.handle.batch.open_items:
        return settled
    return replace(settled, job_may_be_done=True)


def _stage_results(target: Any, tasks: TaskDocuments, results: Sequence[TaskRecord]) -> None:
    """Each result replaces its task document: written as plain writes (one per page, the
    worker's hottest store call; see plain_writes)."""
    plain_writes.stage(
        target,
        (
            plain_writes.set_write(tasks.name(record.job_id, record.id), task_to_doc(record))
            for record in results
        ),
    )


def with_lease(applied: Applied, lease_until: datetime) -> Applied:
    return replace(applied, batch=replace(applied.batch, lease_until=lease_until))


def _counted_on(batch_id: str, shards: int, taken: Sequence[crawl_budget.Taken]) -> int:
    """The counter shard of a batch a crawl found: the first budget shard it took pages from
    (its id's own, unless that one is spent), else its id's. A crawl finds its batches in a
    burst (each page's links a batch, ten for each batch it fetches) and they fall on 256
    shards by their ids' hash, ten on the busiest; each one's creation, claim and end write
    its shard (``make scale``: 2 shards at 1.50 writes a second over 10 s, 1 commit refused).
    A budget shard allows its part of ``max_new``, so a counter shard now counts the batches
    of that part only: about four batches of ten pages for a crawl of 10,000."""
    if taken:
        return taken[0].shard
    return zlib.crc32(batch_id.encode()) % shards
