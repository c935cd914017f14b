"""The reconcile's and the operators' queries on Firestore: submissions that stopped before
publishing, jobs that ended, a job's open batches, the batches nothing has written for a while,
whether any batch moved, and tasks by status (dead letters).
Each covers both layouts (job_store.py's batch documents; batch_in_job.py's jobs that hold
their batch)."""

from __future__ import annotations

from datetime import datetime
from functools import partial
from typing import Any

from google.cloud import firestore
from google.cloud.firestore_v1.base_query import FieldFilter

from scrapejobs_shared.adapters.firestore.batch_in_job import BATCH, batch_in
from scrapejobs_shared.adapters.firestore.call_deadline import reports_outages
from scrapejobs_shared.adapters.firestore.codec import batch_from_doc, job_from_doc, task_from_doc
from scrapejobs_shared.adapters.firestore.store_base import FirestoreStoreBase, reserved
from scrapejobs_shared.adapters.firestore.task_documents import TASKS, job_of, legacy_path, task_of
from scrapejobs_shared.adapters.page_token import InvalidPageToken, decode_token, encode_token
from scrapejobs_shared.domain.records import BatchRecord, JobRecord, TaskRecord
from scrapejobs_shared.domain.statuses import TaskStatus
from scrapejobs_shared.observability.store_ops import count
from scrapejobs_shared.ports.page import Page, PageRequest
from scrapejobs_shared.ports.recovery_queries import TaskScope


@reports_outages
class FirestoreRecoveryQueries(FirestoreStoreBase):
    async def stuck_publishing(self, created_before: datetime, limit: int) -> list[JobRecord]:
        query = self._jobs.where(filter=FieldFilter("publishing", "==", True)).where(
            filter=FieldFilter("created_at", "<", created_before)
        )
        return await self._jobs_of(query.limit(limit))

    async def finished_between(
        self, since: datetime, until: datetime, limit: int
    ) -> list[JobRecord]:
        query = self._jobs.where(filter=FieldFilter("finished_at", ">=", since)).where(
            filter=FieldFilter("finished_at", "<", until)
        )
        return await self._jobs_of(query.limit(limit))

    async def _jobs_of(self, query: Any) -> list[JobRecord]:
        """The jobs ``query`` finds (a query of nothing still costs a read)."""
        jobs = [
            job_from_doc(snap.id, snap.to_dict())
            async for snap in query.stream(**self._deadline.call)
        ]
        count(reads=max(1, len(jobs)))
        return jobs

    async def open_batches(
        self, job_id: str, page_size: int, page_token: str | None
    ) -> Page[BatchRecord]:
        if page_token is None and self._shards.get(job_id) == 0:
            return await self._open_batch_in_job(job_id)
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
        if not snaps and page_token is None:  # a job this process never read may hold its own
            return await self._open_batch_in_job(job_id)
        return Page(batches, token)

    async def _open_batch_in_job(self, job_id: str) -> Page[BatchRecord]:
        count(reads=1)
        snap = await self._job_ref(job_id).get(**self._deadline.call)
        batch = batch_in(job_id, snap.to_dict()) if snap.exists else None
        return Page([batch] if batch is not None and batch.open_items else [], None)

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
        in_jobs = (
            self._jobs.where(filter=FieldFilter(f"{BATCH}.active", "==", True))
            .where(filter=FieldFilter(f"{BATCH}.updated_at", "<", updated_before))
            .order_by(f"{BATCH}.updated_at")
            .limit(limit)
        )
        held = [snap async for snap in in_jobs.stream(**self._deadline.call)]
        count(reads=max(1, len(snaps)) + max(1, len(held)))
        found = [
            (snap.get("updated_at"), batch_from_doc(snap.reference.parent.parent.id, snap.id, doc))
            for snap in snaps
            if (doc := snap.to_dict())
        ] + [
            (snap.get(f"{BATCH}.updated_at"), batch)
            for snap in held
            if (batch := batch_in(snap.id, snap.to_dict())) is not None
        ]
        found.sort(key=lambda pair: pair[0])  # oldest first, of both layouts
        batches = [batch for _, batch in found]
        return [b for b in batches if b.lease_until is None or b.lease_until <= now][:limit]

    async def progressed_since(
        self, since: datetime, until: datetime, job_id: str | None = None
    ) -> bool:
        if job_id is None:
            batches = self._client.collection_group("batches")
        else:
            batches = self._job_ref(job_id).collection("batches")
        if await self._any_written(batches, "updated_at", since, until):
            return True
        # jobs that hold their batch: one query of them all, or the job's own document
        if job_id is None:
            return await self._any_written(self._jobs, f"{BATCH}.updated_at", since, until)
        count(reads=1)
        doc = (await self._job_ref(job_id).get(**self._deadline.call)).to_dict() or {}
        written = (doc.get(BATCH) or {}).get("updated_at")
        return written is not None and since < written <= until

    async def _any_written(
        self, documents: Any, field: str, since: datetime, until: datetime
    ) -> bool:
        query = (
            documents.where(filter=FieldFilter(field, ">", since))
            .where(filter=FieldFilter(field, "<=", until))
            .limit(1)
        )
        count(reads=1)
        return bool([snap async for snap in query.stream(**self._deadline.call)])

    async def tasks_with_status(
        self, status: TaskStatus, scope: TaskScope, page: PageRequest
    ) -> Page[TaskRecord]:
        """Most recently settled first. A job's are at the root (task_documents.py), else
        (written before the root layout) under the job; every job's are both (a collection
        group)."""
        job_id = scope.job_id
        if job_id is not None and reserved(job_id):
            return Page([], None)
        after = None if page.token is None else self._status_cursor(page.token, job_id)
        read = partial(self._with_status, status, scope, page.size, after)
        if job_id is None:
            return await read(self._client.collection_group(TASKS), False)
        legacy = None if after is None else legacy_path(after[1].path)
        return await self._tasks.job_page(self._job_ref(job_id), legacy, read)

    async def _with_status(
        self,
        status: TaskStatus,
        scope: TaskScope,
        page_size: int,
        after: tuple[datetime, Any] | None,
        documents: Any,
        legacy: bool,  # documents under a job (task_documents.job_page): read alike
    ) -> Page[TaskRecord]:
        query = documents.where(filter=FieldFilter("status", "==", status.value))
        if scope.host is not None:
            query = query.where(filter=FieldFilter("host", "==", scope.host))
        if scope.tenant is not None:
            query = query.where(filter=FieldFilter("tenant", "==", scope.tenant))
        query = query.order_by("updated_at", direction=firestore.Query.DESCENDING).order_by(
            "__name__", direction=firestore.Query.DESCENDING
        )
        if after is not None:
            query = query.start_after({"updated_at": after[0], "__name__": after[1]})
        snaps = [snap async for snap in query.limit(page_size + 1).stream(**self._deadline.call)]
        count(reads=max(1, len(snaps)))
        found = [
            task_from_doc(job_of(snap), task_of(snap), snap.to_dict()) for snap in snaps[:page_size]
        ]
        token = None
        if len(snaps) > page_size:
            last = snaps[page_size - 1]
            token = encode_token([found[-1].updated_at.isoformat(), last.reference.path])
        return Page(found, token)

    def _status_cursor(self, page_token: str, job_id: str | None) -> tuple[datetime, Any]:
        """A status listing's token: the last task's settle time and its document (one of the
        job's, when the listing is a job's)."""
        updated_at, path = decode_token(page_token, 2)
        ref = self._tasks.at(path)
        if ref is None or (
            job_id is not None and legacy_path(path) and not path.startswith(f"jobs/{job_id}/")
        ):
            raise InvalidPageToken("page_token is not valid")
        try:
            return datetime.fromisoformat(updated_at), ref
        except ValueError:
            raise InvalidPageToken("page_token is not valid") from None
