"""The recovery queries port: what the reconcile and the operators look for: submissions that
stopped before publishing, jobs that ended, batches that stopped moving, tasks by status (dead
letters). Each an indexed query, never a scan."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from typing import Protocol

from scrapejobs_shared.domain.records import BatchRecord, JobRecord, TaskRecord
from scrapejobs_shared.domain.statuses import TaskStatus
from scrapejobs_shared.ports.page import Page, PageRequest


@dataclass(frozen=True, slots=True)
class TaskScope:
    """Whose tasks a listing reads: one job's (None: every job's), of one host (a host key)
    and of one tenant (dead letters: one recorded before tasks named their tenant has none)."""

    job_id: str | None = None
    host: str | None = None
    tenant: str | None = None


class RecoveryQueries(Protocol):
    """The reconcile's and the operators' queries over jobs and batches."""

    async def stuck_publishing(self, created_before: datetime, limit: int) -> list[JobRecord]:
        """Jobs whose submission stopped between writing the batches and publishing them."""

    async def finished_between(
        self, since: datetime, until: datetime, limit: int
    ) -> list[JobRecord]:
        """Jobs that ended (completed or cancelled) at or after ``since`` and before
        ``until``, at most ``limit``."""

    async def open_batches(
        self, job_id: str, page_size: int, page_token: str | None
    ) -> Page[BatchRecord]:
        """Batches of the job with at least one open task."""

    async def stalled_batches(
        self, updated_before: datetime, now: datetime, limit: int
    ) -> list[BatchRecord]:
        """Batches with open tasks that nothing wrote since ``updated_before`` and that no
        delivery holds (their lease, if any, has lapsed), oldest first, at most ``limit``."""

    async def progressed_since(
        self, since: datetime, until: datetime, job_id: str | None = None
    ) -> bool:
        """Whether a batch (of the job, or of any job) was written after ``since`` and no later
        than ``until`` (a batch stamped in the future by a skewed clock is not progress)."""

    async def tasks_with_status(
        self, status: TaskStatus, scope: TaskScope, page: PageRequest
    ) -> Page[TaskRecord]:
        """Task results with ``status`` in ``scope``, most recently settled first (an indexed
        query, never a scan)."""
