"""In-memory JobStore with the same semantics as the Firestore adapter (for unit tests)."""

from __future__ import annotations

import asyncio
from collections.abc import Sequence
from dataclasses import replace
from datetime import datetime

from scrapejobs_shared.adapters.page_token import decode_token, encode_token
from scrapejobs_shared.domain.records import JobRecord, TaskOutcome, TaskRecord, kept_error
from scrapejobs_shared.domain.statuses import JobStatus, TaskStatus
from scrapejobs_shared.ports.job_store import Claim, ClaimState, Finish, JobExists, Page


class MemoryJobStore:
    def __init__(self) -> None:
        self.jobs: dict[str, JobRecord] = {}
        self.tasks: dict[str, dict[str, TaskRecord]] = {}
        self.rejected: list[tuple[str, str, bytes]] = []
        self.added: dict[str, int] = {}
        self._lock = asyncio.Lock()

    async def create_job(self, job: JobRecord, tasks: Sequence[TaskRecord]) -> None:
        async with self._lock:
            if job.id in self.jobs:
                raise JobExists(job.id)
            self.jobs[job.id] = job
            self.tasks[job.id] = {task.id: task for task in tasks}

    async def add_tasks(
        self, tasks: Sequence[TaskRecord], max_new: int | None = None
    ) -> list[TaskRecord]:
        created: list[TaskRecord] = []
        async with self._lock:
            for task in tasks:
                bucket = self.tasks.setdefault(task.job_id, {})
                added = self.added.get(task.job_id, 0)
                if task.id in bucket or (max_new is not None and added >= max_new):
                    continue
                bucket[task.id] = task
                self.added[task.job_id] = added + 1
                created.append(task)
        return created

    async def get_job(self, job_id: str) -> JobRecord | None:
        return self.jobs.get(job_id)

    async def list_jobs(
        self, status: JobStatus | None, page_size: int, page_token: str | None
    ) -> Page[JobRecord]:
        jobs = sorted(self.jobs.values(), key=lambda j: (j.created_at, j.id), reverse=True)
        jobs = [job for job in jobs if status is None or job.status is status]
        if page_token:
            created_at, last_id = decode_token(page_token, 2)
            cursor = (datetime.fromisoformat(created_at), last_id)
            jobs = [job for job in jobs if (job.created_at, job.id) < cursor]
        page = jobs[:page_size]
        token = None
        if len(jobs) > page_size:
            token = encode_token([page[-1].created_at.isoformat(), page[-1].id])
        return Page(page, token)

    async def set_job_status(self, job_id: str, status: JobStatus, now: datetime) -> bool:
        async with self._lock:
            job = self.jobs.get(job_id)
            if job is None or not job.status.may_become(status):
                return False
            self.jobs[job_id] = replace(job, status=status, updated_at=now)
            return True

    async def mark_published(self, job_id: str, now: datetime) -> None:
        async with self._lock:
            self.jobs[job_id] = replace(self.jobs[job_id], publishing=False, updated_at=now)

    async def stuck_publishing(self, created_before: datetime, limit: int) -> list[JobRecord]:
        stuck = [j for j in self.jobs.values() if j.publishing and j.created_at < created_before]
        return stuck[:limit]

    async def queued_tasks(
        self, job_id: str, page_size: int, page_token: str | None
    ) -> Page[TaskRecord]:
        queued = [t for t in self.tasks.get(job_id, {}).values() if t.status is TaskStatus.QUEUED]
        return _task_page(queued, page_size, page_token)

    async def count_tasks(self, job_id: str) -> dict[TaskStatus, int]:
        counts = dict.fromkeys(TaskStatus, 0)
        for task in self.tasks.get(job_id, {}).values():
            counts[task.status] += 1
        return counts

    async def has_open_tasks(self, job_id: str) -> bool:
        return any(not t.status.terminal for t in self.tasks.get(job_id, {}).values())

    async def list_tasks(
        self, job_id: str, page_size: int, page_token: str | None
    ) -> Page[TaskRecord]:
        return _task_page(list(self.tasks.get(job_id, {}).values()), page_size, page_token)

    async def get_task(self, job_id: str, task_id: str) -> TaskRecord | None:
        return self.tasks.get(job_id, {}).get(task_id)

    async def claim_task(
        self, job_id: str, task_id: str, now: datetime, lease_until: datetime
    ) -> Claim:
        async with self._lock:
            task = self.tasks.get(job_id, {}).get(task_id)
            job = self.jobs.get(job_id)
            if task is None or job is None:
                return Claim(ClaimState.MISSING)
            if task.status.terminal:
                return Claim(ClaimState.DONE, task, job.status)
            if task.status is TaskStatus.RUNNING and task.lease_until and task.lease_until > now:
                return Claim(ClaimState.BUSY, task, job.status)
            claimed = task.with_changes(
                status=TaskStatus.RUNNING,
                attempts=task.attempts + 1,
                lease_until=lease_until,
                updated_at=now,
            )
            self.tasks[job_id][task_id] = claimed
            return Claim(ClaimState.CLAIMED, claimed, job.status)

    async def record_rejected_message(
        self, message_id: str, reason: str, payload: bytes, now: datetime
    ) -> None:
        self.rejected.append((message_id, reason, payload))

    async def release_task(
        self,
        job_id: str,
        task_id: str,
        error: str,
        now: datetime,
        refund_attempt: bool = False,
        claim: TaskRecord | None = None,
    ) -> None:
        async with self._lock:
            task = self.tasks.get(job_id, {}).get(task_id)
            if task is not None and not task.status.terminal:
                attempts = max(0, task.attempts - 1) if refund_attempt else task.attempts
                self.tasks[job_id][task_id] = task.with_changes(
                    lease_until=None, error=error, updated_at=now, attempts=attempts
                )

    async def finish_task(
        self,
        job_id: str,
        task_id: str,
        outcome: TaskOutcome,
        now: datetime,
        claim: TaskRecord | None = None,
    ) -> Finish:
        async with self._lock:
            task = self.tasks.get(job_id, {}).get(task_id)
            if task is None or not task.status.may_become(outcome.status):
                return Finish(False)
            self.tasks[job_id][task_id] = task.with_changes(
                status=outcome.status,
                http_status=outcome.http_status,
                data=outcome.data,
                error=kept_error(outcome, task.error),
                fetched_at=outcome.fetched_at,
                elapsed_ms=outcome.elapsed_ms,
                truncated_fields=outcome.truncated_fields,
                field_errors=outcome.field_errors,
                lease_until=None,
                updated_at=now,
            )
            return Finish(True)


def _task_page(tasks: list[TaskRecord], page_size: int, page_token: str | None) -> Page[TaskRecord]:
    """Tasks in id order (as Firestore orders by document id), after the token's id."""
    ordered = sorted(tasks, key=lambda t: t.id)
    if page_token:
        (last_id,) = decode_token(page_token, 1)
        ordered = [task for task in ordered if task.id > last_id]
    page = ordered[:page_size]
    token = encode_token([page[-1].id]) if len(ordered) > page_size else None
    return Page(page, token)
