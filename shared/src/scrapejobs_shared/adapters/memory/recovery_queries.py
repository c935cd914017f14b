"""The memory twin's ``RecoveryQueries`` (ports/recovery_queries.py): what the reconciler and
the dead-letter views look for, read from the twin's documents."""

from __future__ import annotations

from datetime import datetime

from scrapejobs_shared.adapters.memory.store_state import MemoryStoreState
from scrapejobs_shared.adapters.page_token import decode_token, encode_token
from scrapejobs_shared.domain.records import BatchRecord, JobRecord, TaskRecord
from scrapejobs_shared.domain.statuses import TaskStatus
from scrapejobs_shared.politeness.host_key import host_key
from scrapejobs_shared.ports.job_store import Page
from scrapejobs_shared.ports.page import PageRequest
from scrapejobs_shared.ports.recovery_queries import TaskScope


class MemoryRecoveryQueries:
    def __init__(self, state: MemoryStoreState) -> None:
        self._state = state

    async def stuck_publishing(self, created_before: datetime, limit: int) -> list[JobRecord]:
        jobs = self._state.jobs.values()
        return [j for j in jobs if j.publishing and j.created_at < created_before][:limit]

    async def finished_between(
        self, since: datetime, until: datetime, limit: int
    ) -> list[JobRecord]:
        ended = [
            job
            for job in self._state.jobs.values()
            if job.finished_at is not None and since <= job.finished_at < until
        ]
        return ended[:limit]

    async def open_batches(
        self, job_id: str, page_size: int, page_token: str | None
    ) -> Page[BatchRecord]:
        batches = sorted(
            (b for b in self._state.batches.get(job_id, {}).values() if b.open_items),
            key=lambda b: (len(b.open_items), b.id),
        )
        if page_token:
            open_count, last_id = decode_token(page_token, 2)
            cursor = (int(open_count), last_id)
            batches = [b for b in batches if (len(b.open_items), b.id) > cursor]
        page = batches[:page_size]
        token = None
        if len(batches) > page_size:
            token = encode_token([str(len(page[-1].open_items)), page[-1].id])
        return Page(page, token)

    async def stalled_batches(
        self, updated_before: datetime, now: datetime, limit: int
    ) -> list[BatchRecord]:
        stalled = [
            batch
            for batches in self._state.batches.values()
            for batch in batches.values()
            if batch.active
            and (batch.updated_at or batch.created_at) < updated_before
            and (batch.lease_until is None or batch.lease_until <= now)
        ]
        return sorted(stalled, key=lambda b: b.updated_at or b.created_at)[:limit]

    async def progressed_since(
        self, since: datetime, until: datetime, job_id: str | None = None
    ) -> bool:
        batches = self._state.batches
        jobs = [job_id] if job_id is not None else list(batches)
        return any(
            since < (batch.updated_at or batch.created_at) <= until
            for job in jobs
            for batch in batches.get(job, {}).values()
        )

    async def tasks_with_status(
        self, status: TaskStatus, scope: TaskScope, page: PageRequest
    ) -> Page[TaskRecord]:
        job_id, host, tenant = scope.job_id, scope.host, scope.tenant
        results = self._state.results
        jobs = [job_id] if job_id is not None else list(results)
        found = [
            task
            for job in jobs
            for task in results.get(job, {}).values()
            if task.status is status
            and (host is None or _host(task.url) == host)
            and (tenant is None or task.tenant == tenant)
        ]
        found.sort(key=lambda t: (t.updated_at, t.job_id, t.id), reverse=True)
        if page.token:
            updated_at, last_job, last_task = decode_token(page.token, 3)
            cursor = (datetime.fromisoformat(updated_at), last_job, last_task)
            found = [t for t in found if (t.updated_at, t.job_id, t.id) < cursor]
        listed = found[: page.size]
        token = None
        if len(found) > page.size:
            last = listed[-1]
            token = encode_token([last.updated_at.isoformat(), last.job_id, last.id])
        return Page(listed, token)


def _host(url: str) -> str:
    try:
        return host_key(url)
    except ValueError:
        return ""
