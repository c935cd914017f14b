"""Task results on Firestore: a job's results (in the ``tasks`` collection, task_documents.py,
or inside the document of a job that holds its batch, batch_in_job.py), the processing lane's
handoffs, and the messages no worker could ever process (``rejected_messages``, kept 30
days)."""

from __future__ import annotations

import uuid
from collections.abc import Sequence
from datetime import datetime
from functools import partial
from typing import Any

from scrapejobs_shared.adapters.firestore.batch_in_job import result_in
from scrapejobs_shared.adapters.firestore.call_deadline import reports_outages
from scrapejobs_shared.adapters.firestore.codec import handoff_from_doc, task_from_doc
from scrapejobs_shared.adapters.firestore.store_base import (
    HANDOFFS,
    REJECTED_RETENTION,
    FirestoreStoreBase,
    reserved,
)
from scrapejobs_shared.adapters.firestore.task_documents import task_of
from scrapejobs_shared.adapters.page_token import InvalidPageToken, decode_token, encode_token
from scrapejobs_shared.domain.records import Handoff, TaskRecord
from scrapejobs_shared.observability.store_ops import count
from scrapejobs_shared.ports.page import Page

LEGACY = "jobs"  # a listing token's mark: it goes on under the job (task_documents.py)


@reports_outages
class FirestoreTaskResults(FirestoreStoreBase):
    async def list_tasks(
        self, job_id: str, page_size: int, page_token: str | None
    ) -> Page[TaskRecord]:
        if reserved(job_id):
            return Page([], None)
        held = page_token is None and self._shards.get(job_id) == 0
        if held and (inside := await self._result_inside(job_id)) is not None:
            return Page([inside], None)
        legacy, after = _listing_token(page_token)

        async def inside_job() -> Page[TaskRecord] | None:
            if held:  # looked for above: the job has no results yet
                return Page([], None)
            inside = await self._result_inside(job_id)
            return None if inside is None else Page([inside], None)

        read = partial(self._tasks_page, job_id, page_size, after)
        return await self._tasks.job_page(self._job_ref(job_id), legacy, read, inside_job)

    async def _tasks_page(
        self, job_id: str, page_size: int, after: str | None, documents: Any, legacy: bool
    ) -> Page[TaskRecord]:
        """A page of a job's task documents in their ids' order, from after the id ``after``."""
        query = documents.order_by("__name__")
        if after is not None:
            query = query.start_after({"__name__": after})
        snaps = [snap async for snap in query.limit(page_size + 1).stream(**self._deadline.call)]
        count(reads=max(1, len(snaps)))
        kept = snaps[:page_size]
        tasks = [task_from_doc(job_id, task_of(snap), snap.to_dict()) for snap in kept]
        token = None
        if len(snaps) > page_size:  # after the last document (its id: task_documents.py)
            token = encode_token([LEGACY, kept[-1].id] if legacy else [kept[-1].id])
        return Page(tasks, token)

    async def _result_inside(self, job_id: str, task_id: str | None = None) -> TaskRecord | None:
        """The result a one-task job keeps in its own document (batch_in_job.py)."""
        count(reads=1)
        snap = await self._job_ref(job_id).get(**self._deadline.call)
        inside = result_in(job_id, snap.to_dict()) if snap.exists else None
        return inside if inside is not None and task_id in (None, inside.id) else None

    async def get_task(self, job_id: str, task_id: str) -> TaskRecord | None:
        if reserved(job_id) or reserved(task_id):
            return None
        held = self._shards.get(job_id) == 0
        if held and (inside := await self._result_inside(job_id, task_id)) is not None:
            return inside
        count(reads=1)
        snap = await self._tasks.ref(job_id, task_id).get(**self._deadline.call)
        if snap.exists:  # its id is of this job's and this task's (task_documents.document_id)
            return task_from_doc(job_id, task_id, snap.to_dict())
        if held:
            return None
        if (inside := await self._result_inside(job_id, task_id)) is not None:
            return inside
        count(reads=1)  # written before the root layout (task_documents.py)
        legacy = self._tasks.legacy_ref(self._job_ref(job_id), task_id)
        snap = await legacy.get(**self._deadline.call)
        return task_from_doc(job_id, task_id, snap.to_dict()) if snap.exists else None

    async def record_rejected_message(
        self, message_id: str, reason: str, payload: bytes, now: datetime
    ) -> None:
        doc_id = message_id if message_id and not reserved(message_id) else uuid.uuid4().hex
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

    async def handoffs(self, job_id: str, task_ids: Sequence[str]) -> dict[str, Handoff]:
        if reserved(job_id) or not task_ids:
            return {}
        job_ref = self._job_ref(job_id)
        refs = [job_ref.collection(HANDOFFS).document(task_id) for task_id in task_ids]
        count(reads=len(refs))
        return {
            snap.id: handoff_from_doc(snap.to_dict())
            async for snap in self._client.get_all(refs, **self._deadline.call)
            if snap.exists
        }


def _listing_token(page_token: str | None) -> tuple[bool | None, str | None]:
    """A listing's token: whether it goes on under the job (legacy; None: no token), and after
    which document (its id)."""
    if page_token is None:
        return None, None
    try:
        (after,) = decode_token(page_token, 1)
        legacy = False
    except InvalidPageToken:
        mark, after = decode_token(page_token, 2)
        legacy = mark == LEGACY
        if not legacy:
            raise
    if reserved(after):
        raise InvalidPageToken("page_token is not valid")
    return legacy, after
