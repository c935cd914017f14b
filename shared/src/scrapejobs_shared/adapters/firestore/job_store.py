"""JobStore on Firestore (native mode), async client.

Layout: ``jobs/{job_id}`` and ``jobs/{job_id}/tasks/{task_id}`` (the task document is the result).
Task counts per status live in sharded counter documents (``jobs/{id}/counters/{n}``), changed
in the same transaction as each status change: no single document is written once per task
(production Firestore sustains about one write per second per document), counts always sum to
the number of tasks, and reading them is one batched get instead of a query over every task.
"""

from __future__ import annotations

import asyncio
import uuid
from collections.abc import Sequence
from datetime import datetime, timedelta
from typing import Any

from google.api_core import exceptions as gexc
from google.cloud import firestore
from google.cloud.firestore_v1.base_query import FieldFilter

from scrapejobs_shared.adapters.firestore.codec import (
    job_from_doc,
    job_to_doc,
    task_from_doc,
    task_to_doc,
)
from scrapejobs_shared.adapters.firestore.counters import DEFAULT_COUNTER_SHARDS, ShardedCounters
from scrapejobs_shared.adapters.page_token import decode_token, encode_token
from scrapejobs_shared.domain.records import JobRecord, TaskOutcome, TaskRecord, kept_error
from scrapejobs_shared.domain.statuses import OPEN_TASK_STATUSES, JobStatus, TaskStatus
from scrapejobs_shared.ports.job_store import Claim, ClaimState, Finish, JobExists, Page

BATCH_LIMIT = 500  # Firestore's maximum writes per batch
CLAIM_RETRIES = 5
REJECTED_RETENTION = timedelta(days=30)


class FirestoreJobStore:
    def __init__(
        self,
        client: firestore.AsyncClient,
        *,
        write_concurrency: int = 8,
        counter_shards: int = DEFAULT_COUNTER_SHARDS,
    ) -> None:
        self._client = client
        self._jobs = client.collection("jobs")
        self._write_slots = asyncio.Semaphore(write_concurrency)
        self._counters = ShardedCounters(client, counter_shards)

    @classmethod
    def connect(cls, project_id: str, database: str) -> FirestoreJobStore:
        """A store on a new client (the emulator is used when FIRESTORE_EMULATOR_HOST is set)."""
        return cls(firestore.AsyncClient(project=project_id, database=database))

    def close(self) -> None:
        self._client.close()

    def _tasks(self, job_id: str) -> Any:
        return self._jobs.document(job_id).collection("tasks")

    async def create_job(self, job: JobRecord, tasks: Sequence[TaskRecord]) -> None:
        job_ref = self._jobs.document(job.id)
        if (await job_ref.get()).exists:
            raise JobExists(job.id)
        # Tasks first, the job (with its counts) last: a crash in between leaves no job whose
        # counts promise tasks that do not exist; orphan tasks expire through their TTL.
        await self._write_tasks(tasks)
        batch = self._client.batch()
        batch.create(job_ref, job_to_doc(job))
        self._counters.add_tasks(batch, job_ref, tasks)
        try:
            await batch.commit()
        except gexc.AlreadyExists:
            raise JobExists(job.id) from None

    async def add_tasks(
        self, tasks: Sequence[TaskRecord], max_new: int | None = None
    ) -> list[TaskRecord]:
        if not tasks:
            return []
        job_ref = self._jobs.document(tasks[0].job_id)
        budget_ref = job_ref.collection("crawl").document("budget")
        refs = [job_ref.collection("tasks").document(task.id) for task in tasks]

        @firestore.async_transactional
        async def add(transaction: Any) -> list[TaskRecord]:
            snaps = {
                snap.reference.path: snap
                async for snap in self._client.get_all([budget_ref, *refs], transaction=transaction)
            }
            added = int((snaps[budget_ref.path].to_dict() or {}).get("added") or 0)
            fresh = [t for t, ref in zip(tasks, refs, strict=True) if not snaps[ref.path].exists]
            if max_new is not None:
                fresh = fresh[: max(0, max_new - added)]
            for task in fresh:
                transaction.create(job_ref.collection("tasks").document(task.id), task_to_doc(task))
            if fresh:
                transaction.set(budget_ref, {"added": added + len(fresh)}, merge=True)
            self._counters.add_tasks(transaction, job_ref, fresh)
            return fresh

        created: list[TaskRecord] = await add(self._client.transaction())
        return created

    async def _write_tasks(self, tasks: Sequence[TaskRecord]) -> None:
        chunks = [tasks[i : i + BATCH_LIMIT] for i in range(0, len(tasks), BATCH_LIMIT)]
        await asyncio.gather(*(self._write_chunk(chunk) for chunk in chunks))

    async def _write_chunk(self, chunk: Sequence[TaskRecord]) -> None:
        batch = self._client.batch()
        for task in chunk:
            batch.set(self._tasks(task.job_id).document(task.id), task_to_doc(task))
        async with self._write_slots:
            await batch.commit()

    async def get_job(self, job_id: str) -> JobRecord | None:
        snap = await self._jobs.document(job_id).get()
        return job_from_doc(job_id, snap.to_dict()) if snap.exists else None

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
        snaps = [snap async for snap in query.limit(page_size + 1).stream()]
        jobs = [job_from_doc(snap.id, snap.to_dict()) for snap in snaps[:page_size]]
        token = None
        if len(snaps) > page_size:
            last = jobs[-1]
            token = encode_token([last.created_at.isoformat(), last.id])
        return Page(jobs, token)

    async def set_job_status(self, job_id: str, status: JobStatus, now: datetime) -> bool:
        ref = self._jobs.document(job_id)

        @firestore.async_transactional
        async def move(transaction: Any) -> bool:
            snap = await ref.get(transaction=transaction)
            if not snap.exists or not JobStatus(snap.get("status")).may_become(status):
                return False
            transaction.update(ref, {"status": status.value, "updated_at": now})
            return True

        result: bool = await move(self._client.transaction())
        return result

    async def mark_published(self, job_id: str, now: datetime) -> None:
        await self._jobs.document(job_id).update({"publishing": False, "updated_at": now})

    async def stuck_publishing(self, created_before: datetime, limit: int) -> list[JobRecord]:
        query = (
            self._jobs.where(filter=FieldFilter("publishing", "==", True))
            .where(filter=FieldFilter("created_at", "<", created_before))
            .limit(limit)
        )
        return [job_from_doc(snap.id, snap.to_dict()) async for snap in query.stream()]

    async def queued_tasks(
        self, job_id: str, page_size: int, page_token: str | None
    ) -> Page[TaskRecord]:
        query = (
            self._tasks(job_id)
            .where(filter=FieldFilter("status", "==", TaskStatus.QUEUED.value))
            .order_by("__name__")
        )
        return await self._task_page(job_id, query, page_size, page_token)

    async def count_tasks(self, job_id: str) -> dict[TaskStatus, int]:
        return await self._counters.read(self._jobs.document(job_id))

    async def has_open_tasks(self, job_id: str) -> bool:
        counts = await self.count_tasks(job_id)
        return any(counts[status] for status in OPEN_TASK_STATUSES)

    async def list_tasks(
        self, job_id: str, page_size: int, page_token: str | None
    ) -> Page[TaskRecord]:
        return await self._task_page(
            job_id, self._tasks(job_id).order_by("__name__"), page_size, page_token
        )

    async def _task_page(
        self, job_id: str, query: Any, page_size: int, page_token: str | None
    ) -> Page[TaskRecord]:
        if page_token:
            (last_id,) = decode_token(page_token, 1)
            query = query.start_after({"__name__": last_id})
        snaps = [snap async for snap in query.limit(page_size + 1).stream()]
        tasks = [task_from_doc(job_id, snap.id, snap.to_dict()) for snap in snaps[:page_size]]
        token = encode_token([tasks[-1].id]) if len(snaps) > page_size else None
        return Page(tasks, token)

    async def get_task(self, job_id: str, task_id: str) -> TaskRecord | None:
        snap = await self._tasks(job_id).document(task_id).get()
        return task_from_doc(job_id, task_id, snap.to_dict()) if snap.exists else None

    async def claim_task(
        self, job_id: str, task_id: str, now: datetime, lease_until: datetime
    ) -> Claim:
        """Optimistic: one batched read, then a write guarded by the task's update time (a lost
        race reads again). The claim is ordered at its read: a cancel that committed before
        it is always seen. The claim's update time is the token that lets ``finish_task``
        and ``release_task`` write without a transaction while nothing else touched the task.
        """
        job_ref = self._jobs.document(job_id)
        ref = job_ref.collection("tasks").document(task_id)
        for _ in range(CLAIM_RETRIES):
            snaps = {
                snap.reference.path: snap async for snap in self._client.get_all([ref, job_ref])
            }
            task_snap, job_snap = snaps[ref.path], snaps[job_ref.path]
            if not task_snap.exists or not job_snap.exists:
                return Claim(ClaimState.MISSING)
            job_status = JobStatus(job_snap.get("status"))
            task = task_from_doc(job_id, task_id, task_snap.to_dict())
            if task.status.terminal:
                return Claim(ClaimState.DONE, task, job_status)
            if task.status is TaskStatus.RUNNING and task.lease_until and task.lease_until > now:
                return Claim(ClaimState.BUSY, task, job_status)
            claimed = task.with_changes(
                status=TaskStatus.RUNNING,
                attempts=task.attempts + 1,
                lease_until=lease_until,
                updated_at=now,
            )
            batch = self._client.batch()
            guard = self._client.write_option(last_update_time=task_snap.update_time)
            batch.update(ref, _claim_fields(claimed), option=guard)
            self._counters.move(batch, job_ref, task_id, task.status, TaskStatus.RUNNING)
            try:
                results = await batch.commit()
            except gexc.FailedPrecondition:
                continue  # another delivery changed the task since our read
            token = results[0].update_time
            return Claim(ClaimState.CLAIMED, claimed.with_changes(claim_token=token), job_status)
        return Claim(ClaimState.BUSY)

    async def record_rejected_message(
        self, message_id: str, reason: str, payload: bytes, now: datetime
    ) -> None:
        doc_id = message_id or uuid.uuid4().hex
        await (
            self._client.collection("rejected_messages")
            .document(doc_id)
            .set(
                {
                    "reason": reason,
                    "payload": payload[:10_000],
                    "received_at": now,
                    "expire_at": now + REJECTED_RETENTION,
                }
            )
        )

    async def release_task(
        self,
        job_id: str,
        task_id: str,
        error: str,
        now: datetime,
        refund_attempt: bool = False,
        claim: TaskRecord | None = None,
    ) -> None:
        ref = self._tasks(job_id).document(task_id)
        if claim is not None and claim.claim_token is not None:
            fields: dict[str, Any] = {"lease_until": None, "error": error, "updated_at": now}
            if refund_attempt:
                fields["attempts"] = max(0, claim.attempts - 1)
            guard = self._client.write_option(last_update_time=claim.claim_token)
            try:
                await ref.update(fields, option=guard)
                return
            except gexc.FailedPrecondition:
                pass  # touched since the claim: decide inside a transaction

        @firestore.async_transactional
        async def release(transaction: Any) -> None:
            snap = await ref.get(transaction=transaction)
            if snap.exists and not TaskStatus(snap.get("status")).terminal:
                changes: dict[str, Any] = {"lease_until": None, "error": error, "updated_at": now}
                if refund_attempt:
                    changes["attempts"] = max(0, int(snap.get("attempts") or 0) - 1)
                transaction.update(ref, changes)

        await release(self._client.transaction())

    async def finish_task(
        self,
        job_id: str,
        task_id: str,
        outcome: TaskOutcome,
        now: datetime,
        claim: TaskRecord | None = None,
    ) -> Finish:
        job_ref = self._jobs.document(job_id)
        ref = job_ref.collection("tasks").document(task_id)
        if claim is not None and claim.claim_token is not None:
            batch = self._client.batch()
            guard = self._client.write_option(last_update_time=claim.claim_token)
            batch.update(ref, _outcome_fields(outcome, now, claim.error), option=guard)
            self._counters.move(batch, job_ref, task_id, TaskStatus.RUNNING, outcome.status)
            try:
                results = await batch.commit()
            except gexc.FailedPrecondition:
                pass  # touched since the claim: decide inside a transaction
            else:
                left = self._counters.open_after(results[1], TaskStatus.RUNNING, outcome.status)
                return Finish(True, left)

        @firestore.async_transactional
        async def finish(transaction: Any) -> Finish:
            snap = await ref.get(transaction=transaction)
            if not snap.exists:
                return Finish(False)
            previous = TaskStatus(snap.get("status"))
            if not previous.may_become(outcome.status):
                return Finish(False)
            previous_error = (snap.to_dict() or {}).get("error")
            transaction.update(ref, _outcome_fields(outcome, now, previous_error))
            self._counters.move(transaction, job_ref, task_id, previous, outcome.status)
            return Finish(True)

        result: Finish = await finish(self._client.transaction())
        return result


def _claim_fields(task: TaskRecord) -> dict[str, Any]:
    return {
        "status": task.status.value,
        "attempts": task.attempts,
        "lease_until": task.lease_until,
        "updated_at": task.updated_at,
    }


def _outcome_fields(outcome: TaskOutcome, now: datetime, previous_error: Any) -> dict[str, Any]:
    return {
        "status": outcome.status.value,
        "http_status": outcome.http_status,
        "data": outcome.data,
        "error": kept_error(outcome, previous_error),
        "fetched_at": outcome.fetched_at,
        "elapsed_ms": outcome.elapsed_ms,
        "truncated_fields": list(outcome.truncated_fields),
        "field_errors": outcome.field_errors,
        "lease_until": None,
        "updated_at": now,
    }
