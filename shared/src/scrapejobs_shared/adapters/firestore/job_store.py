"""JobStore and BatchStore on Firestore (native mode), async client.

Layout, under ``jobs/{job_id}``:

* ``batches/{batch_id}``: a batch's tasks (URL, status, attempts, last error), its lease and
  its counter shard. One delivery writes it at a time: its claim, then a commit of results
  about once a second while it runs.
* ``tasks/{task_id}``: a task's result, written in the same commit that settles the task in
  its batch (a crawl also creates it ``queued`` when the page is discovered: that is how a
  page is found at most once per job).
* ``counters/{n}``: sharded counts (see ``counters.py``); ``crawl/budget``: pages added.
* ``handoffs/{task_id}``: what the fetch lane handed the processing lane (the result so far
  and the model's input, one JSON string), written when the task becomes ``processing`` and
  deleted in the commit that finishes it.

A plain URL job therefore costs, per page, one result write plus its share of the batch's
creation, claim and result commits, and one batch read per delivery.
"""

from __future__ import annotations

import asyncio
import random
import uuid
import zlib
from collections import Counter
from collections.abc import Awaitable, Callable, Collection, Sequence
from dataclasses import dataclass, replace
from datetime import datetime, timedelta
from typing import Any, TypeVar

from google.api_core import exceptions as gexc
from google.cloud import firestore
from google.cloud.firestore_v1.base_query import FieldFilter

from scrapejobs_shared.adapters.firestore.call_deadline import CallDeadline, reports_outages
from scrapejobs_shared.adapters.firestore.codec import (
    batch_from_doc,
    batch_to_doc,
    handoff_from_doc,
    handoff_to_doc,
    items_to_doc,
    job_from_doc,
    job_to_doc,
    task_from_doc,
    task_to_doc,
)
from scrapejobs_shared.adapters.firestore.counters import ShardedCounters
from scrapejobs_shared.adapters.firestore.outcome_stats import DEFAULT_SHARDS, OutcomeStats
from scrapejobs_shared.adapters.firestore.page_cache import stage_kept
from scrapejobs_shared.adapters.firestore.workers import FirestoreWorkerDirectory, stage_beat
from scrapejobs_shared.adapters.page_token import decode_token, encode_token
from scrapejobs_shared.domain import batch_transitions
from scrapejobs_shared.domain.batch_transitions import Applied, Lane
from scrapejobs_shared.domain.outcome_stats import slot_of
from scrapejobs_shared.domain.records import (
    BatchItem,
    BatchRecord,
    Handoff,
    JobRecord,
    TaskOutcome,
    TaskRecord,
)
from scrapejobs_shared.domain.statuses import JobStatus, TaskStatus
from scrapejobs_shared.domain.workers import WorkerBeat
from scrapejobs_shared.observability.store_ops import count
from scrapejobs_shared.ports.job_store import (
    MAX_COALESCED_WRITES,
    AlreadyDone,
    Busy,
    Claimed,
    ClaimResult,
    JobExists,
    Missing,
    Page,
    Settled,
    TaskChange,
    coalesced_writes,
)

TASKS = "tasks"  # the collection of a job's task (result) documents
HANDOFFS = "handoffs"  # what the fetch lane handed the processing lane, by task id
BATCH_LIMIT = 500  # Firestore's maximum writes per commit
# Bytes of documents per commit: Firestore refuses a request over 10 MiB (the emulator over
# 4 MiB), and 10,000 URLs of 2 KB make 20 MB of batch documents.
COMMIT_BYTES = 3 * 1024 * 1024
CLAIM_RETRIES = 5
TRANSACTION_ATTEMPTS = 2  # the library's immediate retries of an aborted transaction, a round
TRANSACTION_ROUNDS = 5  # rounds, a random pause apart
T = TypeVar("T")
REJECTED_RETENTION = timedelta(days=30)
SHARDS_CACHE = 10_000
RESERVED_ID = "__"  # Firestore reserves ids that start and end with it


@dataclass(frozen=True, slots=True)
class _Handle:
    """A claim: the batch as this delivery last wrote it, and that write's update time (the
    precondition of the next blind write; None once something else wrote the batch)."""

    batch: BatchRecord
    shard: int
    token: Any


@reports_outages
class FirestoreJobStore:
    def __init__(
        self,
        client: firestore.AsyncClient,
        *,
        write_concurrency: int = 8,
        stats_shards: int = DEFAULT_SHARDS,
        deadline: CallDeadline | None = None,
    ) -> None:
        self._client = client
        self._deadline = deadline or CallDeadline()
        self._jobs = client.collection("jobs")
        self._write_slots = asyncio.Semaphore(write_concurrency)
        self._counters = ShardedCounters(client, self._deadline)
        self._stats = OutcomeStats(client, stats_shards)
        self._shards: dict[str, int] = {}  # counter shards per job id (immutable)

    @classmethod
    def connect(cls, project_id: str, database: str) -> FirestoreJobStore:
        """A store on a new client (the emulator is used when FIRESTORE_EMULATOR_HOST is set)."""
        return cls(firestore.AsyncClient(project=project_id, database=database))

    def close(self) -> None:
        self._client.close()

    def _job_ref(self, job_id: str) -> Any:
        return self._jobs.document(job_id)

    @staticmethod
    def _batch_ref(job_ref: Any, batch_id: str) -> Any:
        return job_ref.collection("batches").document(batch_id)

    @staticmethod
    def _task_ref(job_ref: Any, task_id: str) -> Any:
        return job_ref.collection(TASKS).document(task_id)

    # ---- jobs ----------------------------------------------------------------------------

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

    async def create_jobs(self, jobs: Sequence[tuple[JobRecord, Sequence[BatchRecord]]]) -> None:
        await self._create_in_one_commit(
            [(job, batches, self._creation_writes(job, batches)) for job, batches in jobs]
        )

    async def _create_in_one_commit(
        self,
        jobs: Sequence[tuple[JobRecord, Sequence[BatchRecord], list[tuple[Any, dict[str, Any]]]]],
    ) -> None:
        """Jobs, their batches and counts in one commit; ``create`` on each job document makes
        the whole commit fail (nothing written) when one exists, so no read is needed."""
        commit = self._client.batch()
        writes = 0
        for job, batches, batch_writes in jobs:
            for ref, doc in batch_writes:
                commit.set(ref, doc)
            commit.create(self._job_ref(job.id), job_to_doc(job))
            writes += len(batch_writes) + 1 + self._stage_counts(commit, job, batches)
        count(writes=writes)
        try:
            async with self._write_slots:
                await commit.commit(**self._deadline.call)
        except gexc.AlreadyExists:
            raise JobExists(", ".join(job.id for job, _, _ in jobs)) from None
        for job, _, _ in jobs:
            self._remember_shards(job)

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
                    (self._task_ref(job_ref, t.task_id), _marker(batch, t)) for t in batch.items
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
            doc_size = _approx_size(write[1])
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

    async def get_job(self, job_id: str) -> JobRecord | None:
        if _reserved(job_id):
            return None
        count(reads=1)
        snap = await self._job_ref(job_id).get(**self._deadline.call)
        if not snap.exists:
            return None
        job = job_from_doc(job_id, snap.to_dict())
        self._remember_shards(job)
        return job

    async def list_jobs(
        self, status: JobStatus | None, page_size: int, page_token: str | None
    ) -> Page[JobRecord]:
        query = self._jobs
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
        if _reserved(job_id):
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
        if _reserved(job_id):
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
        if _reserved(job_id):
            return
        deleted = await self._client.recursive_delete(self._job_ref(job_id))
        count(writes=int(deleted or 0))
        self._shards.pop(job_id, None)

    async def mark_published(self, job_ids: Sequence[str], now: datetime) -> None:
        commit = self._client.batch()
        for job_id in job_ids:
            commit.update(self._job_ref(job_id), {"publishing": False, "updated_at": now})
        count(writes=len(job_ids))
        await commit.commit(**self._deadline.call)

    async def stuck_publishing(self, created_before: datetime, limit: int) -> list[JobRecord]:
        query = (
            self._jobs.where(filter=FieldFilter("publishing", "==", True))
            .where(filter=FieldFilter("created_at", "<", created_before))
            .limit(limit)
        )
        jobs = [
            job_from_doc(snap.id, snap.to_dict())
            async for snap in query.stream(**self._deadline.call)
        ]
        count(reads=max(1, len(jobs)))
        return jobs

    async def finished_between(
        self, since: datetime, until: datetime, limit: int
    ) -> list[JobRecord]:
        query = (
            self._jobs.where(filter=FieldFilter("finished_at", ">=", since))
            .where(filter=FieldFilter("finished_at", "<", until))
            .limit(limit)
        )
        jobs = [
            job_from_doc(snap.id, snap.to_dict())
            async for snap in query.stream(**self._deadline.call)
        ]
        count(reads=max(1, len(jobs)))
        return jobs

    async def count_tasks(self, job_id: str) -> dict[TaskStatus, int]:
        shards = await self._shards_of(job_id)
        if shards is None:
            return dict.fromkeys(TaskStatus, 0)
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
        if job.started_at is None and read.started_at is not None:
            job = replace(job, started_at=read.started_at)
        if not read.usage.empty:
            job = replace(job, ai_usage=read.usage)
        return job, read.counts

    async def has_open_tasks(self, job_id: str) -> bool:
        shards = await self._shards_of(job_id)
        if shards is None:
            return False
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

    def _remember_shards(self, job: JobRecord) -> None:
        self._shards[job.id] = job.counter_shards
        if len(self._shards) > SHARDS_CACHE:
            self._shards.pop(next(iter(self._shards)))

    async def list_tasks(
        self, job_id: str, page_size: int, page_token: str | None
    ) -> Page[TaskRecord]:
        if _reserved(job_id):
            return Page([], None)
        query = self._job_ref(job_id).collection(TASKS).order_by("__name__")
        if page_token:
            (last_id,) = decode_token(page_token, 1)
            query = query.start_after({"__name__": last_id})
        snaps = [snap async for snap in query.limit(page_size + 1).stream(**self._deadline.call)]
        count(reads=max(1, len(snaps)))
        tasks = [task_from_doc(job_id, snap.id, snap.to_dict()) for snap in snaps[:page_size]]
        token = encode_token([tasks[-1].id]) if len(snaps) > page_size else None
        return Page(tasks, token)

    async def get_task(self, job_id: str, task_id: str) -> TaskRecord | None:
        if _reserved(job_id) or _reserved(task_id):
            return None
        count(reads=1)
        snap = await self._task_ref(self._job_ref(job_id), task_id).get(**self._deadline.call)
        return task_from_doc(job_id, task_id, snap.to_dict()) if snap.exists else None

    async def record_rejected_message(
        self, message_id: str, reason: str, payload: bytes, now: datetime
    ) -> None:
        doc_id = message_id if message_id and not _reserved(message_id) else uuid.uuid4().hex
        count(writes=1)
        await (
            self._client.collection("rejected_messages")
            .document(doc_id.replace("/", "_"))
            .set(
                {
                    "reason": reason,
                    "payload": payload[:10_000],
                    "received_at": now,
                    "expire_at": now + REJECTED_RETENTION,
                },
                **self._deadline.call,
            )
        )

    # ---- batches -------------------------------------------------------------------------

    async def add_batch(self, batch: BatchRecord, max_new: int | None = None) -> BatchRecord | None:
        job_ref = self._job_ref(batch.job_id)
        batch_ref = self._batch_ref(job_ref, batch.id)
        budget_ref = job_ref.collection("crawl").document("budget")
        task_refs = [self._task_ref(job_ref, item.task_id) for item in batch.items]

        @firestore.async_transactional
        async def add(transaction: Any) -> BatchRecord | None:
            refs = [job_ref, budget_ref, batch_ref, *task_refs]
            count(reads=len(refs))
            snaps = {
                snap.reference.path: snap
                async for snap in self._client.get_all(
                    refs, transaction=transaction, **self._deadline.call
                )
            }
            job_snap, batch_snap = snaps[job_ref.path], snaps[batch_ref.path]
            if batch_snap.exists:
                return batch_from_doc(batch.job_id, batch.id, batch_snap.to_dict())
            if not job_snap.exists:
                return None
            added = int((snaps[budget_ref.path].to_dict() or {}).get("added") or 0)
            fresh = [
                item
                for item, ref in zip(batch.items, task_refs, strict=True)
                if not snaps[ref.path].exists
            ]
            if max_new is not None:
                fresh = fresh[: max(0, max_new - added)]
            if not fresh:
                return None
            stored = BatchRecord(
                batch.job_id, batch.id, tuple(fresh), batch.created_at, batch.expire_at
            )
            shard = _shard_of(batch.id, int(job_snap.get("counter_shards") or 1))
            transaction.create(batch_ref, batch_to_doc(stored, shard))
            for item in fresh:
                transaction.create(self._task_ref(job_ref, item.task_id), _marker(stored, item))
            budget = {"added": added + len(fresh), "expire_at": batch.expire_at}
            transaction.set(budget_ref, budget, merge=True)
            queued = {TaskStatus.QUEUED: len(fresh)}
            self._counters.add(transaction, job_ref, shard, queued, batch.expire_at)
            count(writes=len(fresh) + 3)
            return stored

        result: BatchRecord | None = await self._in_transaction(add)
        return result

    async def open_batches(
        self, job_id: str, page_size: int, page_token: str | None
    ) -> Page[BatchRecord]:
        query = (
            self._job_ref(job_id)
            .collection("batches")
            .where(filter=FieldFilter("open", ">", 0))
            .order_by("open")
            .order_by("__name__")
        )
        if page_token:
            open_count, last_id = decode_token(page_token, 2)
            query = query.start_after({"open": int(open_count), "__name__": last_id})
        snaps = [snap async for snap in query.limit(page_size + 1).stream(**self._deadline.call)]
        count(reads=max(1, len(snaps)))
        batches = [batch_from_doc(job_id, snap.id, snap.to_dict()) for snap in snaps[:page_size]]
        token = None
        if len(snaps) > page_size:
            token = encode_token([str(len(batches[-1].open_items)), batches[-1].id])
        return Page(batches, token)

    async def stalled_batches(
        self, updated_before: datetime, now: datetime, limit: int
    ) -> list[BatchRecord]:
        query = (
            self._client.collection_group("batches")
            .where(filter=FieldFilter("active", "==", True))
            .where(filter=FieldFilter("updated_at", "<", updated_before))
            .order_by("updated_at")
            .limit(limit)
        )
        snaps = [snap async for snap in query.stream(**self._deadline.call)]
        count(reads=max(1, len(snaps)))
        batches = [
            batch_from_doc(snap.reference.parent.parent.id, snap.id, snap.to_dict())
            for snap in snaps
        ]
        return [b for b in batches if b.lease_until is None or b.lease_until <= now]

    async def progressed_since(
        self, since: datetime, until: datetime, job_id: str | None = None
    ) -> bool:
        if job_id is None:
            batches = self._client.collection_group("batches")
        else:
            batches = self._job_ref(job_id).collection("batches")
        query = (
            batches.where(filter=FieldFilter("updated_at", ">", since))
            .where(filter=FieldFilter("updated_at", "<=", until))
            .limit(1)
        )
        count(reads=1)
        return bool([snap async for snap in query.stream(**self._deadline.call)])

    async def tasks_with_status(
        self,
        status: TaskStatus,
        job_id: str | None,
        host: str | None,
        page_size: int,
        page_token: str | None,
    ) -> Page[TaskRecord]:
        if job_id is not None and _reserved(job_id):
            return Page([], None)
        tasks = (
            self._client.collection_group(TASKS)
            if job_id is None
            else self._job_ref(job_id).collection(TASKS)
        )
        query = tasks.where(filter=FieldFilter("status", "==", status.value))
        if host is not None:
            query = query.where(filter=FieldFilter("host", "==", host))
        query = query.order_by("updated_at", direction=firestore.Query.DESCENDING).order_by(
            "__name__", direction=firestore.Query.DESCENDING
        )
        if page_token:
            updated_at, last_job, last_task = decode_token(page_token, 3)
            last = self._task_ref(self._job_ref(last_job), last_task)
            query = query.start_after(
                {"updated_at": datetime.fromisoformat(updated_at), "__name__": last}
            )
        snaps = [snap async for snap in query.limit(page_size + 1).stream(**self._deadline.call)]
        count(reads=max(1, len(snaps)))
        found = [
            task_from_doc(snap.reference.parent.parent.id, snap.id, snap.to_dict())
            for snap in snaps[:page_size]
        ]
        token = None
        if len(snaps) > page_size:
            last_found = found[-1]
            token = encode_token(
                [last_found.updated_at.isoformat(), last_found.job_id, last_found.id]
            )
        return Page(found, token)

    async def reopen(
        self,
        job_id: str,
        batch_id: str,
        task_ids: Sequence[str],
        statuses: frozenset[TaskStatus],
        now: datetime,
    ) -> BatchRecord | None:
        if _reserved(job_id) or _reserved(batch_id):
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
            if not job_snap.exists or not batch_snap.exists:
                return None
            job_status = JobStatus(job_snap.get("status"))
            if job_status is JobStatus.CANCELLED:
                return None
            doc = batch_snap.to_dict()
            applied = batch_transitions.reopen(
                batch_from_doc(job_id, batch_id, doc), wanted, set(statuses)
            )
            if not applied.deltas:
                return None
            transaction.update(ref, _batch_fields(applied.batch, now))
            shard = int(doc.get("shard") or 0)
            self._counters.add(transaction, job_ref, shard, applied.deltas, applied.batch.expire_at)
            reopened = [i for i in applied.batch.items if i.task_id in wanted]
            for item in reopened:
                if item.status is TaskStatus.QUEUED:
                    transaction.set(
                        self._task_ref(job_ref, item.task_id), _marker(applied.batch, item)
                    )
            if job_status is JobStatus.COMPLETED:
                transaction.update(job_ref, {"status": JobStatus.RUNNING.value, "updated_at": now})
            count(writes=3 + len(reopened))
            return applied.batch

        result: BatchRecord | None = await self._in_transaction(run)
        return result

    async def claim_batch(
        self,
        job_id: str,
        batch_id: str,
        now: datetime,
        lease_until: datetime,
        *,
        mark_started: bool = False,
        lane: Lane = "fetch",
    ) -> ClaimResult:
        """Optimistic: one read, then a commit guarded by the batch's update time (a lost race
        reads again). The commit's counter write reports the job's cancel mark, so a cancel
        that committed before the claim is always seen."""
        if _reserved(job_id) or _reserved(batch_id):
            return Missing()
        job_ref = self._job_ref(job_id)
        ref = self._batch_ref(job_ref, batch_id)
        for _ in range(CLAIM_RETRIES):
            count(reads=1)
            snap = await ref.get(**self._deadline.call)
            if not snap.exists:
                return Missing()
            doc = snap.to_dict()
            batch = batch_from_doc(job_id, batch_id, doc)
            if not batch.open_items:
                return AlreadyDone()
            if batch.lease_until is not None and batch.lease_until > now:
                return Busy(batch.lease_until)
            applied = batch_transitions.claim(batch, lease_until, lane)
            shard = int(doc.get("shard") or 0)
            commit = self._client.batch()
            guard = self._client.write_option(last_update_time=snap.update_time)
            commit.update(ref, _batch_fields(applied.batch, now), option=guard)
            first = mark_started and all(item.attempts == 0 for item in batch.items)
            self._counters.move(
                commit,
                job_ref,
                shard,
                applied.deltas,
                batch.expire_at,
                started_at=now if first else None,  # kept on the shard: no job write
            )
            count(writes=2)
            try:
                results = await commit.commit(**self._deadline.call)
            except gexc.FailedPrecondition:
                continue  # another delivery changed the batch since our read
            after = self._counters.after(results[1], applied.deltas)
            handle = _Handle(applied.batch, shard, results[0].update_time)
            return Claimed(applied.batch, after.cancelled, handle)
        return Busy(now)

    async def settle(
        self,
        handle: object,
        changes: Sequence[TaskChange],
        now: datetime,
        lease_until: datetime | None = None,
        beat: WorkerBeat | None = None,
    ) -> Settled:
        assert isinstance(handle, _Handle), "settle takes the handle of a claim"
        if handle.token is not None:
            applied = batch_transitions.settle(handle.batch, changes, now)
            if lease_until is not None:
                applied = _with_lease(applied, lease_until)
            try:
                return await self._commit_settled(handle, applied, now, beat)
            except gexc.FailedPrecondition:
                pass  # something else wrote the batch: decide inside a transaction
        settled = await self._settle_in_transaction(handle, changes, now, lease_until)
        if beat is not None:  # rare: the report on its own
            await FirestoreWorkerDirectory(self._client, self._deadline).report(beat)
        return settled

    async def _commit_settled(
        self, handle: _Handle, applied: Applied, now: datetime, beat: WorkerBeat | None
    ) -> Settled:
        job_ref = self._job_ref(handle.batch.job_id)
        ref = self._batch_ref(job_ref, handle.batch.id)
        commit = self._client.batch()
        guard = self._client.write_option(last_update_time=handle.token)
        commit.update(ref, _batch_fields(applied.batch, now), option=guard)
        self._counters.move(
            commit,
            job_ref,
            handle.shard,
            applied.deltas,
            applied.batch.expire_at,
            usage=applied.usage,
        )
        _stage_results(commit, job_ref, applied.results)
        stats = self._stats.stage(commit, slot_of(now), applied.stats)
        handoffs = self._stage_handoffs(commit, job_ref, applied)
        kept = stage_kept(commit, self._client, applied.kept, now)
        if beat is not None:  # last: the results' order above is what is read back
            stage_beat(commit, self._client, beat)
        count(writes=2 + len(applied.results) + stats + handoffs + kept + (beat is not None))
        results = await commit.commit(**self._deadline.call)
        after = self._counters.after(results[1], applied.deltas, applied.usage)
        return Settled(
            _Handle(applied.batch, handle.shard, results[0].update_time),
            tuple(record.id for record in applied.results),
            after.cancelled,
            bool(applied.results) and after.open == 0,
        )

    async def _settle_in_transaction(
        self,
        handle: _Handle,
        changes: Sequence[TaskChange],
        now: datetime,
        lease_until: datetime | None,
    ) -> Settled:
        batch = handle.batch

        def apply(current: BatchRecord) -> Applied | None:
            applied = batch_transitions.settle(current, changes, now)
            return _with_lease(applied, lease_until) if lease_until is not None else applied

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
    ) -> Settled | Busy | Missing:
        if _reserved(job_id) or _reserved(batch_id):
            return Missing()
        busy: list[Busy] = []

        def apply(current: BatchRecord) -> Applied | None:
            if current.lease_until is not None and current.lease_until > now:
                busy.append(Busy(current.lease_until))
                return None
            return batch_transitions.close(current, outcome, now, statuses)

        settled = await self._transact(job_id, batch_id, apply, now)
        if busy:
            return busy[-1]
        return settled if settled is not None else Missing()

    async def _in_transaction(self, transactional: Callable[[Any], Awaitable[T]]) -> T:
        """Run a ``firestore.async_transactional`` function. Transactions that read the same
        documents and then write them (two crawl pages finding the same page at once) can
        hold each other's locks until both abort; the library retries at once, keeping each
        one's place in line, and on the emulator they may abort together every time. After
        ``TRANSACTION_ATTEMPTS`` such rounds, a round starts again after a random pause, so
        one of them goes first."""
        for round_ in range(TRANSACTION_ROUNDS):
            try:
                return await transactional(
                    self._client.transaction(max_attempts=TRANSACTION_ATTEMPTS)
                )
            except ValueError as exc:  # the library's "failed to commit in N attempts"
                if not isinstance(exc.__cause__, gexc.Aborted) or round_ + 1 == TRANSACTION_ROUNDS:
                    raise
            await asyncio.sleep(random.uniform(0.05, 0.3) * (round_ + 1))
        raise AssertionError("unreachable")

    async def handoffs(self, job_id: str, task_ids: Sequence[str]) -> dict[str, Handoff]:
        if _reserved(job_id) or not task_ids:
            return {}
        job_ref = self._job_ref(job_id)
        refs = [job_ref.collection(HANDOFFS).document(task_id) for task_id in task_ids]
        count(reads=len(refs))
        return {
            snap.id: handoff_from_doc(snap.to_dict())
            async for snap in self._client.get_all(refs, **self._deadline.call)
            if snap.exists
        }

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
        async def run(transaction: Any) -> tuple[Applied, int] | None:
            count(reads=1)
            snap = await ref.get(transaction=transaction, **self._deadline.call)
            if not snap.exists:
                return None
            doc = snap.to_dict()
            applied = apply(batch_from_doc(job_id, batch_id, doc))
            if applied is None:
                return None
            shard = int(doc.get("shard") or 0)
            transaction.update(ref, _batch_fields(applied.batch, now))
            self._counters.add(
                transaction,
                job_ref,
                shard,
                applied.deltas,
                applied.batch.expire_at,
                applied.usage,
            )
            _stage_results(transaction, job_ref, applied.results)
            stats = self._stats.stage(transaction, slot_of(now), applied.stats)
            handoffs = self._stage_handoffs(transaction, job_ref, applied)
            kept = stage_kept(transaction, self._client, applied.kept, now)
            count(writes=2 + len(applied.results) + stats + handoffs + kept)
            return applied, shard

        outcome = await self._in_transaction(run)
        if outcome is None:
            return None
        applied, shard = outcome
        job = await self.get_job(job_id)
        cancelled = job is not None and job.status is JobStatus.CANCELLED
        return Settled(
            _Handle(applied.batch, shard, None),
            tuple(record.id for record in applied.results),
            cancelled,
            bool(applied.results),
        )


def _maybe_done_if_closed(settled: Settled) -> Settled:
    """A settle that leaves its batch with no open task may have closed the job even when it
    finished nothing itself: an earlier commit of the same changes may have landed though its
    caller saw an error (a timeout under load), and this is the retry that follows."""
    assert isinstance(settled.handle, _Handle)
    if settled.job_may_be_done or settled.handle.batch.open_items:
        return settled
    return replace(settled, job_may_be_done=True)


def _status_fields(status: JobStatus, now: datetime) -> dict[str, Any]:
    fields: dict[str, Any] = {"status": status.value, "updated_at": now}
    if status is JobStatus.RUNNING:
        fields["started_at"] = now
    elif status.terminal:
        fields["finished_at"] = now
    return fields


def _batch_fields(batch: BatchRecord, now: datetime) -> dict[str, Any]:
    open_tasks = len(batch.open_items)
    return {
        "items": items_to_doc(batch.items),
        "open": open_tasks,
        "active": open_tasks > 0,
        "lease_until": batch.lease_until,
        "updated_at": now,
    }


def _stage_results(target: Any, job_ref: Any, results: Sequence[TaskRecord]) -> None:
    """Each result replaces its task document."""
    tasks = job_ref.collection(TASKS)
    for record in results:
        target.set(tasks.document(record.id), task_to_doc(record))


def _with_lease(applied: Applied, lease_until: datetime) -> Applied:
    return replace(applied, batch=replace(applied.batch, lease_until=lease_until))


def _marker(batch: BatchRecord, item: BatchItem) -> dict[str, Any]:
    """A crawl page's task document before it has a result: it marks the page as known."""
    record = TaskRecord(
        job_id=batch.job_id,
        id=item.task_id,
        url=item.url,
        status=TaskStatus.QUEUED,
        created_at=batch.created_at,
        updated_at=batch.created_at,
        expire_at=batch.expire_at,
        index=item.index,
        depth=item.depth,
        batch_id=batch.id,
        replays=item.replays,
    )
    return task_to_doc(record)


def _writes_size(writes: Sequence[tuple[Any, dict[str, Any]]]) -> int:
    return sum(_approx_size(doc) for _, doc in writes)


def _approx_size(value: Any) -> int:
    """A document's size, roughly as Firestore counts it (strings by their UTF-8 length)."""
    if isinstance(value, str):
        return len(value.encode()) + 1
    if isinstance(value, dict):
        return sum(len(key) + 1 + _approx_size(item) for key, item in value.items())
    if isinstance(value, list | tuple):
        return sum(_approx_size(item) for item in value)
    return 8


def _shard_of(batch_id: str, shards: int) -> int:
    return zlib.crc32(batch_id.encode()) % shards


def _reserved(doc_id: str) -> bool:
    """Ids Firestore refuses (``__...__``, with a slash, empty or too long): never stored."""
    return (
        not doc_id
        or "/" in doc_id
        or len(doc_id) > 256
        or (doc_id.startswith(RESERVED_ID) and doc_id.endswith(RESERVED_ID))
        or doc_id in (".", "..")
    )
