"""Job submission and queries: orchestration over the store and publisher ports."""

from __future__ import annotations

import logging
import uuid
from collections.abc import Sequence
from dataclasses import dataclass, replace
from datetime import timedelta

from opentelemetry.trace import Tracer

from scrapejobs_shared.domain.clock import Clock
from scrapejobs_shared.domain.crawl_identity import crawl_task_id
from scrapejobs_shared.domain.jobspec import JobRequest, JobSpec
from scrapejobs_shared.domain.records import JobRecord, TaskOutcome, TaskRecord, task_id_for
from scrapejobs_shared.domain.statuses import JobStatus, TaskStatus
from scrapejobs_shared.messaging.task_message import TaskMessage
from scrapejobs_shared.observability.tracing import inject_trace_context
from scrapejobs_shared.ports.job_store import JobExists, JobStore, Page
from scrapejobs_shared.ports.task_publisher import TaskPublisher

log = logging.getLogger(__name__)


REPUBLISH_PAGE = 500


class JobNotFound(LookupError):
    pass


class JobAlreadyFinished(Exception):
    pass


@dataclass(frozen=True, slots=True)
class JobView:
    job: JobRecord
    counts: dict[TaskStatus, int]
    created: bool = True  # False when an identical trigger had already created the job

    @property
    def total(self) -> int:
        return sum(self.counts.values())


class JobService:
    def __init__(
        self,
        store: JobStore,
        publisher: TaskPublisher,
        clock: Clock,
        retention: timedelta,
        tracer: Tracer,
    ) -> None:
        self._tracer = tracer
        self._store = store
        self._publisher = publisher
        self._clock = clock
        self._retention = retention

    async def submit(
        self, request: JobRequest, job_id: str | None = None, trigger: str | None = None
    ) -> JobView:
        """Store the job and its tasks, then publish one message per task.

        ``job_id`` derived from a scheduler trigger makes a retried trigger return the job
        it created the first time instead of submitting it twice.
        """
        job = self._new_job(request, job_id or uuid.uuid4().hex, trigger)
        tasks = self._new_tasks(job, request)
        with self._tracer.start_as_current_span("submit_job", attributes={"job.id": job.id}):
            try:
                await self._store.create_job(job, tasks)
            except JobExists:
                log.info("duplicate trigger ignored", extra={"job_id": job.id, "trigger": trigger})
                return replace(await self.get(job.id), created=False)
            failed = await self._publish(tasks)
            await self._store.mark_published(job.id, self._clock())
        counts = {status: 0 for status in TaskStatus} | {
            TaskStatus.QUEUED: len(tasks) - failed,
            TaskStatus.FAILED: failed,
        }
        log.info("job submitted", extra={"job_id": job.id, "tasks": len(tasks)})
        return JobView(job, counts)

    async def get(self, job_id: str) -> JobView:
        job = await self._job(job_id)
        return JobView(job, await self._store.count_tasks(job_id))

    async def list_jobs(
        self, status: JobStatus | None, page_size: int, page_token: str | None
    ) -> Page[JobRecord]:
        return await self._store.list_jobs(status, page_size, page_token)

    async def results(
        self, job_id: str, page_size: int, page_token: str | None
    ) -> Page[TaskRecord]:
        await self._job(job_id)
        return await self._store.list_tasks(job_id, page_size, page_token)

    async def cancel(self, job_id: str) -> JobView:
        """Cancel: workers then settle every unstarted task as ``cancelled`` without fetching."""
        job = await self._job(job_id)
        if job.status is JobStatus.COMPLETED:
            raise JobAlreadyFinished(job_id)
        await self._store.set_job_status(job_id, JobStatus.CANCELLED, self._clock())
        log.info("job cancelled", extra={"job_id": job_id})
        return await self.get(job_id)

    async def republish_stuck(self, older_than: timedelta, limit: int = 50) -> tuple[int, int]:
        """Recover submissions that stopped between writing tasks and publishing them (a crash,
        a deploy): publish every still-queued task again (claims make duplicates harmless).
        Returns (jobs, tasks) republished."""
        jobs = await self._store.stuck_publishing(self._clock() - older_than, limit)
        republished = 0
        for job in jobs:
            token: str | None = None
            while True:
                page = await self._store.queued_tasks(job.id, REPUBLISH_PAGE, token)
                republished += len(page.items) - await self._publish(page.items)
                token = page.next_page_token
                if token is None:
                    break
            await self._store.mark_published(job.id, self._clock())
            log.warning("republished a stuck submission", extra={"job_id": job.id})
        return len(jobs), republished

    async def _job(self, job_id: str) -> JobRecord:
        job = await self._store.get_job(job_id)
        if job is None:
            raise JobNotFound(job_id)
        return job

    def _new_job(self, request: JobRequest, job_id: str, trigger: str | None) -> JobRecord:
        now = self._clock()
        return JobRecord(
            id=job_id,
            status=JobStatus.QUEUED,
            spec=JobSpec.from_request(request),
            created_at=now,
            updated_at=now,
            expire_at=now + self._retention,
            labels=dict(request.labels),
            total=len(request.target_urls()),
            kind="crawl" if request.crawl is not None else "urls",
            trigger=trigger,
            publishing=True,
        )

    def _new_tasks(self, job: JobRecord, request: JobRequest) -> list[TaskRecord]:
        """One task per URL; a crawl starts with its start URL, keyed as workers key pages."""

        def task_id(index: int, url: str) -> str:
            if request.crawl is not None:
                return crawl_task_id(job.id, url)
            return task_id_for(job.id, str(index))

        return [
            TaskRecord(
                job_id=job.id,
                id=task_id(index, url),
                url=url,
                status=TaskStatus.QUEUED,
                index=index,
                created_at=job.created_at,
                updated_at=job.created_at,
                expire_at=job.expire_at,
            )
            for index, url in enumerate(request.target_urls())
        ]

    async def _publish(self, tasks: Sequence[TaskRecord]) -> int:
        """Publish every task; a task whose message could not be published is failed."""
        if not tasks:
            return 0
        messages = [TaskMessage(job_id=t.job_id, task_id=t.id, url=t.url) for t in tasks]
        results = await self._publisher.publish(messages, inject_trace_context())
        lost = [t for t, r in zip(tasks, results, strict=True) if isinstance(r, BaseException)]
        if not lost:
            return 0
        job_id = lost[0].job_id
        for task in lost:
            outcome = TaskOutcome(TaskStatus.FAILED, error="publish_failed: could not enqueue")
            await self._store.finish_task(job_id, task.id, outcome, self._clock())
        log.error("tasks not published", extra={"job_id": job_id, "lost": len(lost)})
        if not await self._store.has_open_tasks(job_id):
            await self._store.set_job_status(job_id, JobStatus.COMPLETED, self._clock())
        return len(lost)
