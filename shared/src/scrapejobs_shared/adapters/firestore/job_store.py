r"""JobStore and BatchStore on Firestore (native mode), async client.

Layout, under ``jobs/{job_id}``:

* ``batches/{batch_id}``: a batch's tasks (URL, status, attempts, last error), its lease and
  its counter shard. One delivery writes it at a time: its claim, then a commit of results
  about once a second while it runs.
* ``counters/{n}``: sharded counts (see ``counters.py``); ``crawl/budget`` and
  ``crawl/budget-{k}``: a crawl's pages added, one shard per counter shard (crawl_budget.py).
* ``handoffs/{task_id}``: what the fetch lane handed the processing lane (the result so far
  and the model's input, one JSON string), written when the task becomes ``processing`` and
  deleted in the commit that finishes it.

and at the root, ``tasks/{task_id}.{job_id}`` (``job_id`` a field too; task_documents.py says
why):
a task's result, written in the same commit that settles the task in its batch (a crawl also
creates it ``queued`` when the page is discovered: that is how a page is found at most once
per job).

A plain URL job therefore costs, per page, one result write plus its share of the batch's
creation, claim and result commits, and one batch read per delivery.

A job of one batch created by ``create_jobs`` (coalesced submissions: one-URL jobs above all)
is one document instead: the job holds its batch and counts, and a one-task job its result
(batch_in_job.py). It costs one write to create, one to claim (no read, given its claim token)
and one to settle and complete; a bundle's such jobs are
claimed in one commit (joint_claims.py).

One object serves the store's ports (ports/job_store.py), composed of one adapter per port over
one shared state (store_base.py): ``FirestoreJobStore`` answers ``Jobs`` itself and hands each
call of the others to the adapter that does it (its table of ``Part``, adapters/part.py):
claims to ``FirestoreJointClaims`` (batch_claims.py, a bundle's in joint_claims.py), settles,
closes, replays and new batches to ``FirestoreBatchStore`` (batch_store.py), results, handoffs
and rejected messages to ``FirestoreTaskResults`` (task_results.py), the recovery's queries to
``FirestoreRecoveryQueries`` (recovery_queries.py).
"""

from __future__ import annotations

import asyncio
from collections import Counter
from collections.abc import Sequence
from dataclasses import replace
from datetime import datetime
from typing import Any

from google.api_core import exceptions as gexc
from google.cloud import firestore
from google.cloud.firestore_v1.base_query import FieldFilter

from scrapejobs_shared.adapters.firestore import plain_writes
from scrapejobs_shared.adapters.firestore.batch_in_job import (
    batch_in,
    claim_token,
    counts_of,
    job_doc,
    tally_of,
)
from scrapejobs_shared.adapters.firestore.batch_store import FirestoreBatchStore
from scrapejobs_shared.adapters.firestore.call_deadline import CallDeadline, reports_outages
from scrapejobs_shared.adapters.firestore.codec import (
    approx_size,
    batch_to_doc,
    job_from_doc,
    job_to_doc,
)
from scrapejobs_shared.adapters.firestore.joint_claims import FirestoreJointClaims
from scrapejobs_shared.adapters.firestore.recovery_queries import FirestoreRecoveryQueries
from scrapejobs_shared.adapters.firestore.store_base import (
    BATCH_LIMIT,
    CLAIM_RETRIES,
    COMMIT_BYTES,
    FirestoreStoreBase,
    StoreState,
    marker,
    reserved,
)
from scrapejobs_shared.adapters.firestore.task_results import FirestoreTaskResults
from scrapejobs_shared.adapters.page_token import decode_token, encode_token
from scrapejobs_shared.adapters.part import Part
from scrapejobs_shared.domain.job_tally import with_tally
from scrapejobs_shared.domain.records import (
    BatchRecord,
    JobRecord,
)
from scrapejobs_shared.domain.statuses import OPEN_TASK_STATUSES, JobStatus, TaskStatus
from scrapejobs_shared.observability.store_ops import count
from scrapejobs_shared.ports.job_store import (
    MAX_COALESCED_WRITES,
    JobExists,
    Page,
    coalesced_writes,
    holds_its_batch,
)
from scrapejobs_shared.ports.page import PageRequest


@reports_outages
class FirestoreJobStore(FirestoreStoreBase):
    def __init__(
        self,
        client: firestore.AsyncClient,
        *,
        write_concurrency: int = 8,
        deadline: CallDeadline | None = None,
    ) -> None:
        state = StoreState.of(client, write_concurrency=write_concurrency, deadline=deadline)
        super().__init__(state)
        self._claims, self._batch_store = FirestoreJointClaims(state), FirestoreBatchStore(state)
        self._results, self._queries = FirestoreTaskResults(state), FirestoreRecoveryQueries(state)

    # which adapter does each call of the other ports (ports/job_store.py)
    claim_batch = Part("_claims", FirestoreJointClaims.claim_batch)
    claim_together = Part("_claims", FirestoreJointClaims.claim_together)
    settle = Part("_batch_store", FirestoreBatchStore.settle)
    cancel_heard = Part("_batch_store", FirestoreBatchStore.cancel_heard)
    close_batch = Part("_batch_store", FirestoreBatchStore.close_batch)
    add_batch = Part("_batch_store", FirestoreBatchStore.add_batch)
    reopen = Part("_batch_store", FirestoreBatchStore.reopen)
    list_tasks = Part("_results", FirestoreTaskResults.list_tasks)
    get_task = Part("_results", FirestoreTaskResults.get_task)
    handoffs = Part("_results", FirestoreTaskResults.handoffs)
    record_rejected_message = Part("_results", FirestoreTaskResults.record_rejected_message)
    stuck_publishing = Part("_queries", FirestoreRecoveryQueries.stuck_publishing)
    finished_between = Part("_queries", FirestoreRecoveryQueries.finished_between)
    open_batches = Part("_queries", FirestoreRecoveryQueries.open_batches)
    stalled_batches = Part("_queries", FirestoreRecoveryQueries.stalled_batches)
    progressed_since = Part("_queries", FirestoreRecoveryQueries.progressed_since)
    tasks_with_status = Part("_queries", FirestoreRecoveryQueries.tasks_with_status)

    @classmethod
    def connect(cls, project_id: str, database: str) -> FirestoreJobStore:
        """A store on a new client (the emulator is used when FIRESTORE_EMULATOR_HOST is set)."""
        return cls(firestore.AsyncClient(project=project_id, database=database))

    def close(self) -> None:
        """Close the client (a store made by :meth:`connect` owns it)."""
        self._client.close()

    async def create_job(self, job: JobRecord, batches: Sequence[BatchRecord]) -> None:
        writes = self._creation_writes(job, batches)
        one_commit = coalesced_writes(job, batches) <= MAX_COALESCED_WRITES
        if one_commit and _writes_size(writes) <= COMMIT_BYTES:
            await self._create_in_one_commit([(job, batches, writes)])  # ``create`` guards it
            return
        job_ref = self._job_ref(job.id)
        count(reads=1)
        if (await job_ref.get(**self._deadline.call)).exists:
            raise JobExists(job.id)
        # Batches first, the job (with its counts) last: a crash in between leaves no job whose
        # counts promise tasks that do not exist; orphan batches expire through their TTL.
        await self._write_all(writes)
        commit = self._client.batch()
        commit.create(job_ref, job_to_doc(job))
        shards = self._stage_counts(commit, job, batches)
        count(writes=1 + shards)
        try:
            await commit.commit(**self._deadline.call)
        except gexc.AlreadyExists:
            raise JobExists(job.id) from None
        self._remember_shards(job)

    async def create_jobs(
        self, jobs: Sequence[tuple[JobRecord, Sequence[BatchRecord]]]
    ) -> dict[str, str]:
        """A job of one batch is one document that holds it (batch_in_job.py)."""
        return await self._create_in_one_commit(
            [
                (
                    job,
                    batches,
                    [] if holds_its_batch(job, batches) else self._creation_writes(job, batches),
                )
                for job, batches in jobs
            ],
            held=True,
        )

    async def _create_in_one_commit(
        self,
        jobs: Sequence[tuple[JobRecord, Sequence[BatchRecord], list[tuple[Any, dict[str, Any]]]]],
        held: bool = False,
    ) -> dict[str, str]:
        """Jobs, their batches and counts in one commit; ``create`` on each job document makes
        the whole commit fail (nothing written) when one exists, so no read is needed.
        ``held``: a job of one batch holds it; its claim token is answered."""
        commit = self._client.batch()
        writes = 0
        created: dict[str, tuple[int, dict[str, Any]]] = {}  # held: its write, its document
        for job, batches, batch_writes in jobs:
            if held and holds_its_batch(job, batches):
                doc = job_doc(job, batches[0])
                created[job.id] = (len(commit), doc)
                name = plain_writes.name_of(self._job_ref(job.id))
                plain_writes.stage(commit, [plain_writes.create_write(name, doc)])
                writes += 1
                continue
            for ref, doc in batch_writes:
                commit.set(ref, doc)
            commit.create(self._job_ref(job.id), job_to_doc(job))
            writes += len(batch_writes) + 1 + self._stage_counts(commit, job, batches)
        count(writes=writes)
        try:
            async with self._write_slots:
                results = await commit.commit(**self._deadline.call)
        except gexc.AlreadyExists:
            raise JobExists(", ".join(job.id for job, _, _ in jobs)) from None
        for job, _, _ in jobs:
            self._remember_shards(job, 0 if job.id in created else job.counter_shards)
        return {
            job_id: claim_token(results[n].update_time, doc) for job_id, (n, doc) in created.items()
        }

    def _creation_writes(
        self, job: JobRecord, batches: Sequence[BatchRecord]
    ) -> list[tuple[Any, dict[str, Any]]]:
        """A new job's batch documents (and a crawl's page markers)."""
        job_ref = self._job_ref(job.id)
        markers = job.kind == "crawl"  # a crawl's pages are known by their task documents
        writes: list[tuple[Any, dict[str, Any]]] = []
        for n, batch in enumerate(batches):
            shard = n % job.counter_shards
            writes.append((self._batch_ref(job_ref, batch.id), batch_to_doc(batch, shard)))
            if markers:
                writes += [
                    (self._tasks.ref(job.id, t.task_id), marker(batch, t)) for t in batch.items
                ]
        return writes

    def _stage_counts(self, writer: Any, job: JobRecord, batches: Sequence[BatchRecord]) -> int:
        """Stage a new job's counts (its batches' tasks, shard by shard); returns the shards."""
        per_shard: dict[int, Counter[TaskStatus]] = {}
        for n, batch in enumerate(batches):
            per_shard.setdefault(n % job.counter_shards, Counter()).update(
                i.status for i in batch.items
            )
        job_ref = self._job_ref(job.id)
        for shard, counts in per_shard.items():
            self._counters.add(writer, job_ref, shard, counts, job.expire_at)
        return len(per_shard)

    async def _write_all(self, writes: list[tuple[Any, dict[str, Any]]]) -> None:
        chunks: list[list[tuple[Any, dict[str, Any]]]] = [[]]
        size = 0
        for write in writes:
            doc_size = approx_size(write[1])
            if chunks[-1] and (len(chunks[-1]) == BATCH_LIMIT or size + doc_size > COMMIT_BYTES):
                chunks.append([])
                size = 0
            chunks[-1].append(write)
            size += doc_size
        await asyncio.gather(*(self._write_chunk(chunk) for chunk in chunks if chunk))

    async def _write_chunk(self, chunk: list[tuple[Any, dict[str, Any]]]) -> None:
        commit = self._client.batch()
        for ref, doc in chunk:
            commit.set(ref, doc)
        count(writes=len(chunk))
        async with self._write_slots:
            await commit.commit(**self._deadline.call)

    async def list_jobs(
        self, status: JobStatus | None, page: PageRequest, tenant: str | None = None
    ) -> Page[JobRecord]:
        page_size, page_token = page.size, page.token
        query = self._jobs
        if tenant is not None:
            query = query.where(filter=FieldFilter("tenant", "==", tenant))
        if status is not None:
            query = query.where(filter=FieldFilter("status", "==", status.value))
        query = query.order_by("created_at", direction=firestore.Query.DESCENDING).order_by(
            "__name__", direction=firestore.Query.DESCENDING
        )
        if page_token:
            created_at, last_id = decode_token(page_token, 2)
            query = query.start_after(
                {"created_at": datetime.fromisoformat(created_at), "__name__": last_id}
            )
        snaps = [snap async for snap in query.limit(page_size + 1).stream(**self._deadline.call)]
        count(reads=max(1, len(snaps)))
        jobs = [job_from_doc(snap.id, snap.to_dict()) for snap in snaps[:page_size]]
        token = None
        if len(snaps) > page_size:
            last = jobs[-1]
            token = encode_token([last.created_at.isoformat(), last.id])
        return Page(jobs, token)

    async def set_job_status(self, job_id: str, status: JobStatus, now: datetime) -> bool:
        """Optimistic, like claims: read, then a write guarded by the read's update time (a
        lost race reads again). No transaction: the first batches of a job reach many workers
        at once, and lock-taking transactions on one document time out under that contention."""
        if reserved(job_id):
            return False
        return await self._move_job(job_id, status, now) is not None

    async def _move_job(self, job_id: str, status: JobStatus, now: datetime) -> JobRecord | None:
        ref = self._job_ref(job_id)
        for _ in range(CLAIM_RETRIES):
            count(reads=1)
            snap = await ref.get(**self._deadline.call)
            if not snap.exists or not JobStatus(snap.get("status")).may_become(status):
                return None
            guard = self._client.write_option(last_update_time=snap.update_time)
            count(writes=1)
            try:
                await ref.update(_status_fields(status, now), option=guard, **self._deadline.call)
            except gexc.FailedPrecondition:
                continue  # changed since our read: decide again
            return job_from_doc(job_id, snap.to_dict())
        return None

    async def cancel_job(self, job_id: str, now: datetime) -> bool:
        """The status and the cancel mark on every counter shard in one commit (guarded by the
        job's update time): a claim either sees both or neither, and a crash leaves no job
        that reads cancelled while its claims do not see it."""
        if reserved(job_id):
            return False
        ref = self._job_ref(job_id)
        for _ in range(CLAIM_RETRIES):
            count(reads=1)
            snap = await ref.get(**self._deadline.call)
            if not snap.exists or not JobStatus(snap.get("status")).may_become(JobStatus.CANCELLED):
                return False
            job = job_from_doc(job_id, snap.to_dict())
            commit = self._client.batch()
            guard = self._client.write_option(last_update_time=snap.update_time)
            commit.update(ref, _status_fields(JobStatus.CANCELLED, now), option=guard)
            self._counters.mark_cancelled(commit, ref, job.counter_shards, job.expire_at)
            count(writes=1 + job.counter_shards)
            try:
                await commit.commit(**self._deadline.call)
            except gexc.FailedPrecondition:
                continue  # changed since our read: decide again
            return True
        return False

    async def delete_job(self, job_id: str) -> None:
        """The job's document, what is under it, and its results at the root."""
        if reserved(job_id):
            return
        deleted = await self._client.recursive_delete(self._job_ref(job_id))
        results = self._tasks.of_job(job_id).select([]).limit(BATCH_LIMIT)
        while refs := [snap.reference async for snap in results.stream(**self._deadline.call)]:
            commit = self._client.batch()
            for ref in refs:
                commit.delete(ref)
            count(reads=len(refs), writes=len(refs))
            await commit.commit(**self._deadline.call)
        count(writes=int(deleted or 0))
        self._shards.pop(job_id, None)

    async def mark_published(self, job_ids: Sequence[str], now: datetime) -> None:
        commit = self._client.batch()
        for job_id in job_ids:
            commit.update(self._job_ref(job_id), {"publishing": False, "updated_at": now})
        count(writes=len(job_ids))
        await commit.commit(**self._deadline.call)

    async def count_tasks(self, job_id: str) -> dict[TaskStatus, int]:
        shards = await self._shards_of(job_id)
        if shards is None:
            return dict.fromkeys(TaskStatus, 0)
        if shards == 0:
            read = await self.job_with_counts(job_id)
            return dict.fromkeys(TaskStatus, 0) if read is None else read[1]
        return await self._counters.read(self._job_ref(job_id), shards)

    async def job_with_counts(self, job_id: str) -> tuple[JobRecord, dict[TaskStatus, int]] | None:
        """One batched get of the job and its counter shards once the shards are known (this
        process created or read the job before: every poll after the first). A job's start
        kept on its shards (coalesced jobs) stands in for the job document's."""
        shards = await self._shards_of(job_id)
        if shards is None:
            return None
        read = await self._counters.read_with(self._job_ref(job_id), shards)
        if read is None:
            return None
        job = job_from_doc(job_id, read.job_doc)
        batch = batch_in(job_id, read.job_doc)
        if batch is not None:  # a job that holds its batch: its counts are the batch's
            return with_tally(job, tally_of(read.job_doc)), counts_of(batch)
        if job.started_at is None and read.started_at is not None:
            job = replace(job, started_at=read.started_at)
        return with_tally(job, read.tally), read.counts

    async def has_open_tasks(self, job_id: str) -> bool:
        shards = await self._shards_of(job_id)
        if shards is None:
            return False
        if shards == 0:
            read = await self.job_with_counts(job_id)
            return read is not None and any(read[1][s] for s in OPEN_TASK_STATUSES)
        return await self._counters.any_open(self._job_ref(job_id), shards)

    async def _shards_of(self, job_id: str) -> int | None:
        """A job's counter shards never change: read once per job (a status poll would
        otherwise read the job document twice)."""
        shards = self._shards.get(job_id)
        if shards is None:
            job = await self.get_job(job_id)
            if job is None:
                return None
            shards = job.counter_shards
        return shards


def _status_fields(status: JobStatus, now: datetime) -> dict[str, Any]:
    fields: dict[str, Any] = {"status": status.value, "updated_at": now}
    if status is JobStatus.RUNNING:
        fields["started_at"] = now
    elif status.terminal:
        fields["finished_at"] = now
    return fields


def _writes_size(writes: Sequence[tuple[Any, dict[str, Any]]]) -> int:
    return sum(approx_size(doc) for _, doc in writes)
