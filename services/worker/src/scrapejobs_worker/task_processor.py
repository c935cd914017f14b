"""Processing one pushed task: claim, fetch, extract, record; idempotent under redelivery."""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Callable
from dataclasses import replace
from datetime import timedelta

from opentelemetry.trace import Tracer

from scrapejobs_shared.clock import Clock
from scrapejobs_shared.jobspec import JobSpec
from scrapejobs_shared.ports import Claim, ClaimState, JobStore
from scrapejobs_shared.records import JobRecord, TaskOutcome, TaskRecord
from scrapejobs_shared.statuses import JobStatus, TaskStatus
from scrapejobs_shared.task_message import MalformedMessage, PushedMessage, TaskMessage
from scrapejobs_shared.tracing import extract_trace_context
from scrapejobs_worker.fetch_port import Fetcher, FetchError, FetchRequest, FetchResponse
from scrapejobs_worker.http_status_policy import StatusClass, classify_status
from scrapejobs_worker.verdict import Verdict

log = logging.getLogger(__name__)

Extractor = Callable[[FetchResponse, JobSpec], TaskOutcome]


class TaskProcessor:
    def __init__(
        self,
        store: JobStore,
        fetcher: Fetcher,
        extractor: Extractor,
        clock: Clock,
        tracer: Tracer,
        *,
        fetch_timeout_s: float,
        lease_margin_s: float = 10.0,
    ) -> None:
        self._store = store
        self._fetcher = fetcher
        self._extract = extractor
        self._clock = clock
        self._tracer = tracer
        self._fetch_timeout_s = fetch_timeout_s
        self._lease = timedelta(seconds=fetch_timeout_s + lease_margin_s)

    async def handle_push(self, pushed: PushedMessage) -> Verdict:
        message = await self._task_of(pushed)
        if message is None:
            return Verdict.done("malformed message recorded")
        context = extract_trace_context(pushed.attributes)
        attributes = {"job.id": message.job_id, "task.id": message.task_id}
        with self._tracer.start_as_current_span("process_task", context, attributes=attributes):
            return await self._process(message)

    async def handle_dead_letter(self, pushed: PushedMessage) -> Verdict:
        message = await self._task_of(pushed)
        if message is None:
            return Verdict.done("malformed dead letter recorded")
        outcome = TaskOutcome(TaskStatus.DEAD_LETTERED)
        if await self._store.finish_task(message.job_id, message.task_id, outcome, self._clock()):
            log.warning("task dead-lettered", extra=_ids(message))
            await self._complete_if_done(message.job_id)
        return Verdict.done("dead-lettered")

    async def reject_envelope(self, body: bytes, reason: str) -> None:
        log.error("malformed push envelope", extra={"why": reason})
        await self._store.record_rejected_message("", reason, body, self._clock())

    async def _task_of(self, pushed: PushedMessage) -> TaskMessage | None:
        try:
            return pushed.task()
        except MalformedMessage as exc:
            log.error("malformed message", extra={"message_id": pushed.message_id, "why": str(exc)})
            await self._store.record_rejected_message(
                pushed.message_id, str(exc), pushed.data, self._clock()
            )
            return None

    async def _process(self, message: TaskMessage) -> Verdict:
        claim = await self._claim(message)
        if claim.state is ClaimState.BUSY and claim.task and claim.task.lease_until:
            # A duplicate delivery: wait out the owner's lease (its fetch ends within it)
            # rather than nacking, which would burn a delivery attempt.
            remaining = (claim.task.lease_until - self._clock()).total_seconds()
            await asyncio.sleep(min(max(remaining, 0.0), self._lease.total_seconds()) + 0.2)
            claim = await self._claim(message)
        if claim.state is ClaimState.MISSING:
            log.warning("task not found", extra=_ids(message))
            return Verdict.done("unknown task")
        if claim.state is ClaimState.DONE:
            return Verdict.done("already finished")
        if claim.state is ClaimState.BUSY:
            return Verdict.retry("task is being processed by another delivery")
        assert claim.task is not None and claim.job is not None
        return await self._run(claim.job, claim.task)

    async def _claim(self, message: TaskMessage) -> Claim:
        now = self._clock()
        return await self._store.claim_task(message.job_id, message.task_id, now, now + self._lease)

    async def _run(self, job: JobRecord, task: TaskRecord) -> Verdict:
        if job.status is JobStatus.CANCELLED:
            return await self._finish(task, TaskOutcome(TaskStatus.CANCELLED, error="cancelled"))
        if job.status is JobStatus.QUEUED:
            await self._store.set_job_status(job.id, JobStatus.RUNNING, self._clock())
        max_attempts = job.spec.options.max_attempts
        if max_attempts is not None and task.attempts > max_attempts:
            return await self._give_up(task, max_attempts)
        try:
            response = await self._fetch(job.spec, task)
        except FetchError as exc:
            error = f"{exc.reason}: {exc.detail}"
            if exc.transient:
                return await self._retry(task, error, max_attempts)
            return await self._finish(task, TaskOutcome(TaskStatus.FAILED, error=error))
        return await self._settle(job.spec, task, response, max_attempts)

    async def _fetch(self, spec: JobSpec, task: TaskRecord) -> FetchResponse:
        timeout = min(spec.options.timeout_s, self._fetch_timeout_s)
        request = FetchRequest(task.url, spec.options.headers, timeout)
        with self._tracer.start_as_current_span("fetch", attributes={"url.full": task.url}):
            return await self._fetcher.fetch(request)

    async def _settle(
        self, spec: JobSpec, task: TaskRecord, response: FetchResponse, max_attempts: int | None
    ) -> Verdict:
        status_class = classify_status(response.status)
        if status_class is StatusClass.TRANSIENT:
            return await self._retry(task, f"HTTP {response.status}", max_attempts)
        if status_class is StatusClass.PERMANENT:
            outcome = TaskOutcome(
                TaskStatus.FAILED,
                http_status=response.status,
                error=f"HTTP {response.status}",
                fetched_at=self._clock(),
                elapsed_ms=response.elapsed_ms,
            )
            return await self._finish(task, outcome)
        with self._tracer.start_as_current_span("extract"):
            outcome = self._extract(response, spec)
        return await self._finish(task, replace(outcome, fetched_at=self._clock()))

    async def _retry(self, task: TaskRecord, error: str, max_attempts: int | None) -> Verdict:
        if max_attempts is not None and task.attempts >= max_attempts:
            return await self._give_up(task, max_attempts, error)
        await self._store.release_task(task.job_id, task.id, error, self._clock())
        log.info("transient failure", extra={"task_id": task.id, "error": error})
        return Verdict.retry(error)

    async def _give_up(
        self, task: TaskRecord, max_attempts: int, error: str | None = None
    ) -> Verdict:
        last = error or task.error or "unknown error"
        outcome = TaskOutcome(
            TaskStatus.FAILED, error=f"max_attempts: gave up after {max_attempts}: {last}"
        )
        return await self._finish(task, outcome)

    async def _finish(self, task: TaskRecord, outcome: TaskOutcome) -> Verdict:
        if await self._store.finish_task(task.job_id, task.id, outcome, self._clock()):
            await self._complete_if_done(task.job_id)
        return Verdict.done(outcome.status.value)

    async def _complete_if_done(self, job_id: str) -> None:
        if await self._store.has_open_tasks(job_id):
            return
        if await self._store.set_job_status(job_id, JobStatus.COMPLETED, self._clock()):
            log.info("job completed", extra={"job_id": job_id})


def _ids(message: TaskMessage) -> dict[str, str]:
    return {"job_id": message.job_id, "task_id": message.task_id}
