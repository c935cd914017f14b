"""The jobs port: a job's record, its life (created, published, moving forward, cancelled,
deleted) and its task counts. Semantics shared by every part of the store: job_store.py."""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime
from typing import Protocol

from scrapejobs_shared.domain.records import BatchRecord, JobRecord
from scrapejobs_shared.domain.statuses import JobStatus, TaskStatus
from scrapejobs_shared.ports.page import Page, PageRequest


class Jobs(Protocol):
    """Jobs and their counts."""

    async def create_job(self, job: JobRecord, batches: Sequence[BatchRecord]) -> None:
        """Write the job and all its batches. Raises ``JobExists`` if the job id exists."""

    async def create_jobs(
        self, jobs: Sequence[tuple[JobRecord, Sequence[BatchRecord]]]
    ) -> dict[str, str]:
        """Write several small jobs (coalesced submissions), each with its batches, in one
        commit: all or none. Raises ``JobExists``, having written nothing, if any job id
        exists. At most ``MAX_COALESCED_WRITES`` documents (see ``coalesced_writes``).
        Returns the claim token of each job that holds its batch (``holds_its_batch``): its
        message carries it to the worker's claim. Such a job needs no ``mark_published``."""

    async def get_job(self, job_id: str) -> JobRecord | None: ...

    async def list_jobs(
        self, status: JobStatus | None, page: PageRequest, tenant: str | None = None
    ) -> Page[JobRecord]: ...

    async def set_job_status(self, job_id: str, status: JobStatus, now: datetime) -> bool:
        """Move the job forward to ``status``; False if that would move it backwards."""

    async def cancel_job(self, job_id: str, now: datetime) -> bool:
        """Cancel: every claim and settle that commits after this sees it. False if the job
        had already ended (or does not exist)."""

    async def mark_published(self, job_ids: Sequence[str], now: datetime) -> None:
        """Every message of these jobs' submissions was published (one commit)."""

    async def delete_job(self, job_id: str) -> None:
        """Delete the job and every document under it."""

    async def count_tasks(self, job_id: str) -> dict[TaskStatus, int]: ...

    async def job_with_counts(self, job_id: str) -> tuple[JobRecord, dict[TaskStatus, int]] | None:
        """The job and its task counts (a status query), read together where the store can
        (one round trip once the job's counter shards are known); None if no such job."""

    async def has_open_tasks(self, job_id: str) -> bool: ...
