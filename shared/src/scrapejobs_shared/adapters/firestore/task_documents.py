"""Where a task's result document lives: ``tasks/{task_id}.{job_id}`` (:func:`document_id`),
a root collection, its job's id a field (``job_id``) too.

Why at the root: a task's id is a hash of its job's id and its page's key
(``records.task_id_for``), so the results of every job spread over one collection's whole key
range, a range that has taken writes for as long as the deployment has run. Under their job
(``jobs/{job_id}/tasks``, before this layout) each new job's results were a new key range,
which Firestore ramps from 500 operations a second, 50% more every 5 minutes (its "500/50/5"
rule): the limits model found that ramp the one bound on growing from 20 to 200 worker
instances (docs/scale.md, "Growth").

Results written by a release before this layout stay under their job until their TTL
(``expire_at``) and are still read there: a job none of whose results are at the root is
looked for under its job (:meth:`TaskDocuments.job_page`), a task not at the root under
its job (:meth:`TaskDocuments.legacy_ref`), and queries over every job (collection group
``tasks``) see both. A job's document says where its results are (:data:`RESULTS_AT_ROOT`,
written when the job is created), so what reads the job's document before writing a task's
(a replay, a crawl's new pages) writes it where the job's others are. The worker's settles do
not read it: a job running across the upgrade would have results in both places and list only
those at the root, so docs/deploy.md says to upgrade with no job running.
"""

from __future__ import annotations

import re
from collections.abc import Awaitable, Callable, Mapping
from typing import Any, TypeVar

from google.cloud.firestore_v1.base_query import FieldFilter

from scrapejobs_shared.adapters.firestore.plain_writes import name_of
from scrapejobs_shared.ports.page import Page

T = TypeVar("T")

TASKS = "tasks"  # the root collection of task (result) documents, and the legacy subcollection
JOB_ID = "job_id"  # a task document's field: its job's id
RESULTS_AT_ROOT = "results_at_root"  # a job document's field: its results are at the root
# a task document's path, as a page token carries it: at the root, or under its job (legacy)
_PATH = re.compile(rf"^(?:jobs/[^/]+/)?{TASKS}/[^/]+$")


def document_id(job_id: str, task_id: str) -> str:
    """A task document's id at the root: its task's id (a hash: what spreads a job's over the
    key range), then its job's, so that no two jobs' tasks share one whatever their ids, and a
    job's documents are in their tasks' order."""
    return f"{task_id}.{job_id}"


class TaskDocuments:
    """The references, names and queries of task documents, on one client."""

    def __init__(self, client: Any) -> None:
        self._client = client
        self._root = client.collection(TASKS)
        self._prefix = name_of(self._root.document("_")).rpartition("/")[0]

    def ref(self, job_id: str, task_id: str) -> Any:
        return self._root.document(document_id(job_id, task_id))

    def name(self, job_id: str, task_id: str) -> str:
        """A task document's full resource name, without building a reference for it (the
        worker writes one a page: plain_writes)."""
        return f"{self._prefix}/{document_id(job_id, task_id)}"

    def of_job(self, job_id: str) -> Any:
        """A query of one job's task documents at the root."""
        return self._root.where(filter=FieldFilter(JOB_ID, "==", job_id))

    async def job_page(
        self,
        job_ref: Any,
        legacy: bool | None,
        read: Callable[[Any, bool], Awaitable[Page[T]]],
        before_legacy: Callable[[], Awaitable[Page[T] | None]] | None = None,
    ) -> Page[T]:
        """A page of one job's task documents, ``read`` from a query of them (and whether the
        query is of the legacy layout: a page token says so). Where a page token left off
        (``legacy`` not None); else at the root and, when none of the job's are there, under
        the job (written before the root layout), unless ``before_legacy`` finds the page
        elsewhere first (a one-task job's result in its own document, batch_in_job.py)."""
        if legacy is not None:
            documents = self.legacy_of_job(job_ref) if legacy else self.of_job(job_ref.id)
            return await read(documents, legacy)
        found = await read(self.of_job(job_ref.id), False)
        if found.items:
            return found
        if before_legacy is not None and (elsewhere := await before_legacy()) is not None:
            return elsewhere
        return await read(self.legacy_of_job(job_ref), True)

    def of(self, job_ref: Any, job_doc: Mapping[str, Any], task_id: str) -> Any:
        """A task document's reference where its job (its document ``job_doc``) keeps them."""
        if job_doc.get(RESULTS_AT_ROOT):
            return self.ref(job_ref.id, task_id)
        return self.legacy_ref(job_ref, task_id)

    @staticmethod
    def legacy_ref(job_ref: Any, task_id: str) -> Any:
        return job_ref.collection(TASKS).document(task_id)

    @staticmethod
    def legacy_of_job(job_ref: Any) -> Any:
        return job_ref.collection(TASKS)

    def at(self, path: str) -> Any | None:
        """The reference of a task document's path (``tasks/{id}`` or, legacy,
        ``jobs/{job}/tasks/{id}``), None for any other path (a page token is the caller's)."""
        return self._client.document(path) if _PATH.match(path) else None


def legacy_path(path: str) -> bool:
    """Whether a task document's path is under its job (written before the root layout)."""
    return path.startswith("jobs/")


def job_of(snap: Any) -> str:
    """A task document's job: its field, or (legacy) its parent's parent."""
    job_id = (snap.to_dict() or {}).get(JOB_ID)
    return str(job_id) if job_id else str(snap.reference.parent.parent.id)


def task_of(snap: Any) -> str:
    """A task document's task id: its id without its job's (:func:`document_id`), or (legacy)
    its id."""
    job_id = (snap.to_dict() or {}).get(JOB_ID)
    suffix = f".{job_id}"
    return str(snap.id[: -len(suffix)]) if job_id and snap.id.endswith(suffix) else str(snap.id)
