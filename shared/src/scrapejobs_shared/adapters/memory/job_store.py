"""The in-memory twin of the whole store (ports/job_store.py), with the Firestore semantics.

Composed as the Firestore adapter is: ``MemoryJobStore`` is the shared state
(store_state.py: the documents, the lock, the commit) and answers ``Jobs`` itself; each call
of the other ports goes to the part that does it (the ``Part`` table below): batches, claims
and settles to ``MemoryBatchStore`` (batch_store.py), results to ``MemoryTaskResults``
(task_results.py), the recovery's queries to ``MemoryRecoveryQueries`` (recovery_queries.py),
outcome totals to ``MemoryStatsReader`` (outcome_stats.py), the workers' reports to
``MemoryWorkers`` (workers.py), the page cache's index to ``MemoryPageIndex`` (page_index.py).
Tests read and set the state's fields directly (``store.batches``, ``store.reachable``).
Contract tests: tests/contract/.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace
from datetime import datetime

from scrapejobs_shared.adapters.memory.batch_store import MemoryBatchStore
from scrapejobs_shared.adapters.memory.outcome_stats import MemoryStatsReader
from scrapejobs_shared.adapters.memory.page_index import MemoryPageIndex
from scrapejobs_shared.adapters.memory.recovery_queries import MemoryRecoveryQueries
from scrapejobs_shared.adapters.memory.store_state import MemoryStoreState
from scrapejobs_shared.adapters.memory.task_results import MemoryTaskResults
from scrapejobs_shared.adapters.memory.workers import MemoryWorkers
from scrapejobs_shared.adapters.page_token import decode_token, encode_token
from scrapejobs_shared.adapters.part import Part
from scrapejobs_shared.domain.job_tally import with_tally
from scrapejobs_shared.domain.records import BatchRecord, JobRecord
from scrapejobs_shared.domain.statuses import JobStatus, TaskStatus
from scrapejobs_shared.ports.job_store import JobExists, Page, holds_its_batch
from scrapejobs_shared.ports.page import PageRequest


class MemoryJobStore(MemoryStoreState):
    def __init__(self) -> None:
        super().__init__()
        self._workers = MemoryWorkers(self)
        self._batch_store = MemoryBatchStore(self, self._workers)
        self._results = MemoryTaskResults(self)
        self._queries = MemoryRecoveryQueries(self)
        self._stats = MemoryStatsReader(self)
        self._pages = MemoryPageIndex(self)

    # which part does each call of the other ports (ports/job_store.py)
    add_batch = Part("_batch_store", MemoryBatchStore.add_batch)
    reopen = Part("_batch_store", MemoryBatchStore.reopen)
    claim_batch = Part("_batch_store", MemoryBatchStore.claim_batch)
    claim_together = Part("_batch_store", MemoryBatchStore.claim_together)
    settle = Part("_batch_store", MemoryBatchStore.settle)
    cancel_heard = Part("_batch_store", MemoryBatchStore.cancel_heard)
    close_batch = Part("_batch_store", MemoryBatchStore.close_batch)
    list_tasks = Part("_results", MemoryTaskResults.list_tasks)
    get_task = Part("_results", MemoryTaskResults.get_task)
    record_rejected_message = Part("_results", MemoryTaskResults.record_rejected_message)
    handoffs = Part("_results", MemoryTaskResults.handoffs)
    stuck_publishing = Part("_queries", MemoryRecoveryQueries.stuck_publishing)
    finished_between = Part("_queries", MemoryRecoveryQueries.finished_between)
    open_batches = Part("_queries", MemoryRecoveryQueries.open_batches)
    stalled_batches = Part("_queries", MemoryRecoveryQueries.stalled_batches)
    progressed_since = Part("_queries", MemoryRecoveryQueries.progressed_since)
    tasks_with_status = Part("_queries", MemoryRecoveryQueries.tasks_with_status)
    slot_totals = Part("_stats", MemoryStatsReader.slot_totals)
    hour_totals = Part("_stats", MemoryStatsReader.hour_totals)
    day_totals = Part("_stats", MemoryStatsReader.day_totals)
    jobs_by_status = Part("_stats", MemoryStatsReader.jobs_by_status)
    open_work = Part("_stats", MemoryStatsReader.open_work)
    meter = Part("_stats", MemoryStatsReader.meter)
    put = Part("_stats", MemoryStatsReader.put)
    report = Part("_workers", MemoryWorkers.report)
    seen_since = Part("_workers", MemoryWorkers.seen_since)
    get_many = Part("_pages", MemoryPageIndex.get_many)

    async def create_job(self, job: JobRecord, batches: Sequence[BatchRecord]) -> None:
        await self._create(jobs=[(job, batches)], held=False)

    async def create_jobs(
        self, jobs: Sequence[tuple[JobRecord, Sequence[BatchRecord]]]
    ) -> dict[str, str]:
        return await self._create(jobs, held=True)

    async def _create(
        self, jobs: Sequence[tuple[JobRecord, Sequence[BatchRecord]]], held: bool
    ) -> dict[str, str]:
        """``held``: a job of one batch holds it (the port's one-document job)."""
        async with self.lock:
            for job, _ in jobs:
                if job.id in self.jobs:
                    raise JobExists(job.id)
            tokens: dict[str, str] = {}
            for job, batches in jobs:
                if held and holds_its_batch(job, batches):
                    self.held_jobs.add(job.id)
                    tokens[job.id] = f"memory:{job.id}"
                self.jobs[job.id] = job
                self.batches[job.id] = {batch.id: batch for batch in batches}
                self.results[job.id] = {}
                if job.kind == "crawl":
                    for batch in batches:
                        self.mark_found(batch)
            return tokens

    async def get_job(self, job_id: str) -> JobRecord | None:
        return self.jobs.get(job_id)

    async def job_with_counts(self, job_id: str) -> tuple[JobRecord, dict[TaskStatus, int]] | None:
        job = self.jobs.get(job_id)
        if job is None:
            return None
        if job.started_at is None and job_id in self.starts:
            job = replace(job, started_at=self.starts[job_id])
        if job_id in self.tallies:
            job = with_tally(job, self.tallies[job_id])
        return job, await self.count_tasks(job_id)

    async def list_jobs(
        self, status: JobStatus | None, page: PageRequest, tenant: str | None = None
    ) -> Page[JobRecord]:
        jobs = sorted(self.jobs.values(), key=lambda j: (j.created_at, j.id), reverse=True)
        jobs = [job for job in jobs if status is None or job.status is status]
        jobs = [job for job in jobs if tenant is None or job.tenant == tenant]
        if page.token:
            created_at, last_id = decode_token(page.token, 2)
            cursor = (datetime.fromisoformat(created_at), last_id)
            jobs = [job for job in jobs if (job.created_at, job.id) < cursor]
        listed = jobs[: page.size]
        token = None
        if len(jobs) > page.size:
            token = encode_token([listed[-1].created_at.isoformat(), listed[-1].id])
        return Page(listed, token)

    async def set_job_status(self, job_id: str, status: JobStatus, now: datetime) -> bool:
        async with self.lock:
            job = self.jobs.get(job_id)
            if job is None or not job.status.may_become(status):
                return False
            moved = replace(job, status=status, updated_at=now)
            if status is JobStatus.RUNNING:
                moved = replace(moved, started_at=now)
            elif status.terminal:
                moved = replace(moved, finished_at=now)
            self.jobs[job_id] = moved
            return True

    async def cancel_job(self, job_id: str, now: datetime) -> bool:
        return await self.set_job_status(job_id, JobStatus.CANCELLED, now)

    async def delete_job(self, job_id: str) -> None:
        async with self.lock:
            for documents in (self.jobs, self.batches, self.results, self.added):
                documents.pop(job_id, None)

    async def mark_published(self, job_ids: Sequence[str], now: datetime) -> None:
        async with self.lock:
            for job_id in job_ids:
                self.jobs[job_id] = replace(self.jobs[job_id], publishing=False, updated_at=now)

    async def count_tasks(self, job_id: str) -> dict[TaskStatus, int]:
        return self.counts(job_id)

    async def has_open_tasks(self, job_id: str) -> bool:
        return any(batch.open_items for batch in self.batches.get(job_id, {}).values())
