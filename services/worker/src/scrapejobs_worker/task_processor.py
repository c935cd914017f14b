"""Processing one pushed task: be polite, claim, fetch, extract, record; idempotent under
redelivery. A throttled task waits (in-request, then by republishing) without spending attempts."""

from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import Callable
from dataclasses import dataclass, replace
from datetime import timedelta

from opentelemetry.trace import Tracer

from scrapejobs_shared.domain.clock import Clock
from scrapejobs_shared.domain.jobspec import JobSpec
from scrapejobs_shared.domain.records import TaskOutcome, TaskRecord
from scrapejobs_shared.domain.statuses import JobStatus, TaskStatus
from scrapejobs_shared.messaging.task_message import MalformedMessage, PushedMessage, TaskMessage
from scrapejobs_shared.observability.tracing import extract_trace_context, inject_trace_context
from scrapejobs_shared.politeness.host_key import host_key
from scrapejobs_shared.ports.host_gate import Permit, Throttle
from scrapejobs_shared.ports.job_store import Claim, ClaimState, JobStore
from scrapejobs_shared.ports.task_publisher import TaskPublisher
from scrapejobs_worker.crawl_expansion import CrawlExpansion
from scrapejobs_worker.fetch_port import Fetcher, FetchError, FetchRequest, FetchResponse
from scrapejobs_worker.http_status_policy import StatusClass, classify_status
from scrapejobs_worker.job_specs import JobSpecCache
from scrapejobs_worker.page_extraction import ExtractedPage
from scrapejobs_worker.phase_timer import collect_phases, phase
from scrapejobs_worker.politeness import HeldPermit, Politeness
from scrapejobs_worker.retry_after import parse_retry_after
from scrapejobs_worker.verdict import Verdict

log = logging.getLogger(__name__)

Extractor = Callable[[FetchResponse, JobSpec], ExtractedPage]
DEFERRALS = "deferrals"  # message attribute: how often the task was deferred for politeness


@dataclass(frozen=True, slots=True)
class ProcessorPolicy:
    fetch_timeout_s: float = 30.0
    lease_margin_s: float = 10.0
    max_deferrals: int = 50
    throttle_hold_s: float = 10.0
    retry_after_cap_s: float = 300.0


@dataclass(frozen=True, slots=True)
class _Work:
    message: TaskMessage
    spec: JobSpec
    deferrals: int


class TaskProcessor:
    def __init__(
        self,
        store: JobStore,
        fetcher: Fetcher,
        extractor: Extractor,
        politeness: Politeness,
        publisher: TaskPublisher,
        clock: Clock,
        tracer: Tracer,
        policy: ProcessorPolicy,
    ) -> None:
        self._store = store
        self._fetcher = fetcher
        self._extract = extractor
        self._politeness = politeness
        self._publisher = publisher
        self._clock = clock
        self._tracer = tracer
        self._policy = policy
        self._specs = JobSpecCache(store)
        self._crawl = CrawlExpansion(store, publisher, clock)
        self._lease = timedelta(seconds=policy.fetch_timeout_s + policy.lease_margin_s)

    async def handle_push(self, pushed: PushedMessage) -> Verdict:
        message = await self._task_of(pushed)
        if message is None:
            return Verdict.done("malformed message recorded")
        context = extract_trace_context(pushed.attributes)
        attributes = {"job.id": message.job_id, "task.id": message.task_id}
        started = time.perf_counter()
        with (
            collect_phases() as phases,
            self._tracer.start_as_current_span("process_task", context, attributes=attributes),
        ):
            verdict = await self._process(message, _deferrals(pushed))
        duration_ms = round((time.perf_counter() - started) * 1000, 1)
        log.info(
            "task processed",
            extra={
                **_ids(message),
                "verdict": verdict.reason,
                "duration_ms": duration_ms,
                **phases,
            },
        )
        return verdict

    async def handle_dead_letter(self, pushed: PushedMessage) -> Verdict:
        message = await self._task_of(pushed)
        if message is None:
            return Verdict.done("malformed dead letter recorded")
        outcome = TaskOutcome(TaskStatus.DEAD_LETTERED)
        finish = await self._store.finish_task(
            message.job_id, message.task_id, outcome, self._clock()
        )
        if finish:
            log.warning("task dead-lettered", extra=_ids(message))
        if finish.job_may_be_done:
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

    async def _process(self, message: TaskMessage, deferrals: int) -> Verdict:
        with phase("spec"):
            spec = await self._specs.get(message.job_id)
        if spec is None:
            log.warning("job not found", extra=_ids(message))
            return Verdict.done("unknown job")
        work = _Work(message, spec, deferrals)
        with phase("robots"):
            robots = await self._politeness.robots(message.url, spec.options)
        if not robots.allowed:
            return await self._claim_and_run(work, None)
        limits = self._politeness.limits(spec.options, robots.crawl_delay_s)
        with phase("admit"):
            admission = await self._politeness.admit(host_key(message.url), limits, self._lease)
        if isinstance(admission, Throttle):
            return await self._defer(work, f"host busy ({admission.reason})")
        held = self._politeness.hold(admission)
        try:
            return await self._claim_and_run(work, held)
        finally:
            await held.release()

    async def _claim_and_run(self, work: _Work, permit: HeldPermit | None) -> Verdict:
        claim = await self._claim(work.message)
        if claim.state is ClaimState.BUSY and claim.task and claim.task.lease_until:
            # A duplicate delivery: wait out the owner's lease (its fetch ends within it)
            # rather than nacking, which would spend a delivery attempt.
            remaining = (claim.task.lease_until - self._clock()).total_seconds()
            await asyncio.sleep(min(max(remaining, 0.0), self._lease.total_seconds()) + 0.2)
            claim = await self._claim(work.message)
        if claim.state is ClaimState.MISSING:
            log.warning("task not found", extra=_ids(work.message))
            return Verdict.done("unknown task")
        if claim.state is ClaimState.DONE:
            return Verdict.done("already finished")
        if claim.state is ClaimState.BUSY:
            return Verdict.retry("task is being processed by another delivery")
        assert claim.task is not None and claim.job_status is not None
        return await self._run(work, claim.job_status, claim.task, permit)

    async def _claim(self, message: TaskMessage) -> Claim:
        now = self._clock()
        with phase("claim"):
            return await self._store.claim_task(
                message.job_id, message.task_id, now, now + self._lease
            )

    async def _run(
        self, work: _Work, job_status: JobStatus, task: TaskRecord, held: HeldPermit | None
    ) -> Verdict:
        if job_status is JobStatus.CANCELLED:
            return await self._finish(task, TaskOutcome(TaskStatus.CANCELLED, error="cancelled"))
        if job_status is JobStatus.QUEUED:
            await self._store.set_job_status(task.job_id, JobStatus.RUNNING, self._clock())
        if held is None:  # no host permit was sought: robots.txt disallows the page
            outcome = TaskOutcome(TaskStatus.FAILED, error="robots_disallowed")
            return await self._finish(task, outcome)
        max_attempts = work.spec.options.max_attempts
        if max_attempts is not None and task.attempts > max_attempts:
            return await self._give_up(task, max_attempts)
        try:
            response = await self._fetch(work.spec, task)
        except FetchError as exc:
            await held.release()
            return await self._fetch_failed(task, held.permit, exc, max_attempts)
        await held.release()
        return await self._settle(work, task, held.permit, response, max_attempts)

    async def _fetch(self, spec: JobSpec, task: TaskRecord) -> FetchResponse:
        timeout = min(spec.options.timeout_s, self._policy.fetch_timeout_s)
        request = FetchRequest(task.url, spec.options.headers, timeout)
        with (
            phase("fetch"),
            self._tracer.start_as_current_span("fetch", attributes={"url.full": task.url}),
        ):
            return await self._fetcher.fetch(request)

    async def _fetch_failed(
        self, task: TaskRecord, permit: Permit, exc: FetchError, max_attempts: int | None
    ) -> Verdict:
        error = f"{exc.reason}: {exc.detail}"
        if exc.transient:
            await self._politeness.host_failed(permit.host)
            return await self._retry(task, error, max_attempts)
        return await self._finish(task, TaskOutcome(TaskStatus.FAILED, error=error))

    async def _settle(
        self,
        work: _Work,
        task: TaskRecord,
        permit: Permit,
        response: FetchResponse,
        max_attempts: int | None,
    ) -> Verdict:
        throttled = await self._throttle_of(permit.host, response)
        if throttled and work.deferrals < self._policy.max_deferrals:
            await self._store.release_task(
                task.job_id, task.id, throttled, self._clock(), refund_attempt=True, claim=task
            )
            return await self._defer(work, throttled)
        status_class = classify_status(response.status)
        if status_class is StatusClass.TRANSIENT:
            await self._politeness.host_failed(permit.host)
            return await self._retry(task, f"HTTP {response.status}", max_attempts)
        await self._politeness.host_responded(permit)
        if status_class is StatusClass.PERMANENT:
            outcome = TaskOutcome(
                TaskStatus.FAILED,
                http_status=response.status,
                error=f"HTTP {response.status}",
                fetched_at=self._clock(),
                elapsed_ms=response.elapsed_ms,
            )
            return await self._finish(task, outcome)
        with phase("extract"), self._tracer.start_as_current_span("extract"):
            page = self._extract(response, work.spec)
        if work.spec.crawl is not None and page.outcome.status is TaskStatus.SUCCEEDED:
            await self._crawl.expand(work.spec.crawl, task, response.url, page.links)
        return await self._finish(task, replace(page.outcome, fetched_at=self._clock()))

    async def _throttle_of(self, host: str, response: FetchResponse) -> str | None:
        """A 429, or a 503 with Retry-After: the host asks us to slow down (not a failure)."""
        if response.status not in (429, 503):
            return None
        header = response.headers.get("retry-after")
        delay = parse_retry_after(header, self._clock(), self._policy.retry_after_cap_s)
        if delay is None:
            if response.status == 503:
                return None
            delay = self._policy.throttle_hold_s
        await self._politeness.host_throttled(host, delay)
        return f"throttled: HTTP {response.status}, retry after {delay:.0f} s"

    async def _defer(self, work: _Work, reason: str) -> Verdict:
        """Ack this delivery and publish the task again: a fresh delivery count, so waiting
        for a host never dead-letters the task."""
        attributes = {**inject_trace_context(), DEFERRALS: str(work.deferrals + 1)}
        [result] = await self._publisher.publish([work.message], attributes)
        if isinstance(result, BaseException):
            return Verdict.retry(f"{reason}; republish failed")
        return Verdict.done(f"deferred: {reason}")

    async def _retry(self, task: TaskRecord, error: str, max_attempts: int | None) -> Verdict:
        if max_attempts is not None and task.attempts >= max_attempts:
            return await self._give_up(task, max_attempts, error)
        await self._store.release_task(task.job_id, task.id, error, self._clock(), claim=task)
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
        """Record the outcome of a task this delivery claimed."""
        with phase("finish"):
            finish = await self._store.finish_task(
                task.job_id, task.id, outcome, self._clock(), claim=task
            )
            if finish.job_may_be_done:
                await self._complete_if_done(task.job_id)
        return Verdict.done(outcome.status.value)

    async def _complete_if_done(self, job_id: str) -> None:
        if await self._store.has_open_tasks(job_id):
            return
        if await self._store.set_job_status(job_id, JobStatus.COMPLETED, self._clock()):
            log.info("job completed", extra={"job_id": job_id})


def _deferrals(pushed: PushedMessage) -> int:
    value = pushed.attributes.get(DEFERRALS, "0")
    return int(value) if value.isdigit() else 0


def _ids(message: TaskMessage) -> dict[str, str]:
    return {"job_id": message.job_id, "task_id": message.task_id}
