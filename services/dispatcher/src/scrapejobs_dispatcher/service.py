"""Job submission and queries: orchestration over the store and publisher ports."""

from __future__ import annotations

import contextlib
import logging
import uuid
from collections.abc import AsyncIterator
from dataclasses import dataclass, replace
from datetime import datetime, timedelta

from opentelemetry.metrics import NoOpMeter
from opentelemetry.trace import Tracer

from scrapejobs_dispatcher.submission_coalescer import SubmissionCoalescer
from scrapejobs_dispatcher.submission_metrics import SubmissionMetrics
from scrapejobs_shared.delivery.batching import DEFAULT_BATCH_SIZE, plan_batches, shards_for
from scrapejobs_shared.delivery.enqueue import Enqueuer, StoreForEnqueue
from scrapejobs_shared.delivery.job_events import JobEvents
from scrapejobs_shared.domain.clock import Clock
from scrapejobs_shared.domain.crawl_identity import crawl_task_id
from scrapejobs_shared.domain.jobspec import JobRequest, JobSpec
from scrapejobs_shared.domain.model_usage import ModelPrices
from scrapejobs_shared.domain.progress import Progress, ProgressEstimator
from scrapejobs_shared.domain.records import (
    BatchItem,
    BatchRecord,
    JobRecord,
    TaskRecord,
    task_id_for,
)
from scrapejobs_shared.domain.statuses import OPEN_TASK_STATUSES, JobStatus, TaskStatus
from scrapejobs_shared.observability.store_ops import counting
from scrapejobs_shared.pipeline.spec import ai_stage_index
from scrapejobs_shared.politeness.host_gate import HostGate
from scrapejobs_shared.politeness.host_key import host_key, key_of, origin_url
from scrapejobs_shared.ports.dependency_unavailable import PUBSUB, DependencyUnavailable
from scrapejobs_shared.ports.job_store import JobExists, Page
from scrapejobs_shared.ports.task_publisher import TaskPublisher
from scrapejobs_shared.ports.webhooks import WebhookDelivery, WebhookLog

log = logging.getLogger(__name__)


REPUBLISH_PAGE = 500
REPLAY_LIMIT = 500  # dead letters replayed per call
CLOCK_SKEW = timedelta(minutes=1)  # writes stamped later than this ahead are not progress
REPLAY_PAGE = 500
MAX_JOB_RETRY = 10_000  # a job's tasks: the largest submission
EXPORT_PAGE = 500  # results read per store call while a job's results are exported


@dataclass(frozen=True, slots=True)
class Reconciled:
    batches: int  # published again
    tasks: int  # their open tasks
    skipped: int  # stalled, but their job (or the system) is moving


def _host_filter(host: str | None) -> str | None:
    """A URL or a host key → the host key results are listed by; ``InvalidFilter`` when it is
    neither (a value the store could not even be asked about, such as a 2,000-character
    string, must never reach it)."""
    if not host:
        return None
    try:
        return key_of(host)
    except ValueError as exc:
        raise InvalidFilter("host", str(exc)) from None


def _never_claimed(batch: BatchRecord) -> bool:
    return all(i.status is TaskStatus.QUEUED and i.attempts == 0 for i in batch.items)


class JobNotFound(LookupError):
    pass


class InvalidFilter(ValueError):
    """A list filter that names nothing: a 422 naming the parameter."""

    def __init__(self, parameter: str, reason: str) -> None:
        super().__init__(f"{parameter}: {reason}")
        self.parameter = parameter


class JobAlreadyFinished(Exception):
    pass


class SubmissionUnconfirmed(Exception):
    """A dependency did not answer while job ``job_id`` was being submitted: ``stored`` is
    True after a Pub/Sub outage (the job is stored, its tasks wait to be published), None after
    a Firestore one during its commit (it may or may not be stored), False when nothing was
    submitted yet. Either way a retry with the same Idempotency-Key gives one job, whose tasks
    are published then."""

    def __init__(self, job_id: str, outage: DependencyUnavailable, stored: bool | None) -> None:
        super().__init__(str(outage))
        self.job_id = job_id
        self.outage = outage
        self.stored = stored


class JobStillRunning(Exception):
    pass


class StageUnavailable(ValueError):
    """A pipeline stage this deployment cannot run (an ``ai`` stage with no AI provider
    configured): a 422 naming the stage."""

    def __init__(self, field: str, reason: str) -> None:
        super().__init__(f"{field}: {reason}")
        self.field = field


@dataclass(frozen=True, slots=True)
class JobView:
    job: JobRecord
    counts: dict[TaskStatus, int]
    progress: Progress
    created: bool = True  # False when an identical trigger had already created the job
    ai_cost: float | None = None  # what its ai stage cost (None without usage or prices)

    @property
    def total(self) -> int:
        return sum(self.counts.values())


@dataclass(frozen=True, slots=True)
class ResultPages:
    """Every result of ``job``, read page by page as ``pages`` is iterated (at most one page
    held at a time; the store is read only while the consumer takes pages)."""

    job: JobRecord
    pages: AsyncIterator[list[TaskRecord]]


class JobService:
    def __init__(
        self,
        store: StoreForEnqueue,
        publisher: TaskPublisher,
        clock: Clock,
        retention: timedelta,
        tracer: Tracer,
        batch_size: int = DEFAULT_BATCH_SIZE,
        events: JobEvents | None = None,
        webhook_log: WebhookLog | None = None,
        metrics: SubmissionMetrics | None = None,
        coalesce_window_s: float | None = None,
        coalesce_busy_window_s: float = 0.0,
        host_gate: HostGate | None = None,
        ai_provider: str | None = None,
        ai_prices: ModelPrices | None = None,
    ) -> None:
        """``host_gate``: the breakers an explicit replay closes (none without it);
        ``ai_provider``: the configured AI provider, without which ``ai`` stages are refused;
        ``ai_prices``: what model tokens cost, for a job's cost (none shown without them)."""
        self._ai_provider = ai_provider
        self._ai_prices = ai_prices
        self._tracer = tracer
        self._host_gate = host_gate
        self._metrics = metrics or SubmissionMetrics(NoOpMeter("scrapejobs-dispatcher"))
        self._store = store
        self._events = events
        self._webhook_log = webhook_log
        self._enqueuer = Enqueuer(store, publisher, clock, tracer, events)
        self._coalescer = (
            None
            if coalesce_window_s is None
            else SubmissionCoalescer(
                store, self._enqueuer, clock, coalesce_window_s, coalesce_busy_window_s
            )
        )
        self._clock = clock
        self._retention = retention
        self._batch_size = batch_size
        self._progress = ProgressEstimator()

    async def submit(
        self, request: JobRequest, job_id: str | None = None, trigger: str | None = None
    ) -> JobView:
        """Store the job and its batches of tasks, then publish one message per batch.

        ``job_id`` derived from a scheduler trigger (or an idempotency key) makes a retried
        request return the job it created the first time instead of submitting it twice.
        A small job is committed and published together with the others submitted within
        the coalescing window (see ``submission_coalescer``).
        """
        self._check_stages(request)
        with counting() as ops:
            job_id = job_id or uuid.uuid4().hex
            now = self._clock()
            batches = self._new_batches(job_id, request, now)
            job = self._new_job(request, job_id, trigger, batches, now)
            with self._tracer.start_as_current_span("submit_job", attributes={"job.id": job.id}):
                try:
                    failed = await self._create_and_publish(job, batches)
                except JobExists:
                    log.info(
                        "duplicate submission ignored",
                        extra={"job_id": job.id, "trigger": trigger},
                    )
                    return replace(await self.existing(job.id), created=False)
                except DependencyUnavailable as exc:
                    log.warning(
                        "submission unconfirmed",
                        extra={"job_id": job.id, "dependency": exc.dependency},
                    )
                    stored = True if exc.dependency == PUBSUB else None
                    raise SubmissionUnconfirmed(job.id, exc, stored) from exc
        if self._events is not None:
            await self._events.started(job)
        self._metrics.submitted(job.total, crawl=request.crawl is not None)
        counts = {status: 0 for status in TaskStatus} | {
            TaskStatus.QUEUED: job.total - failed,
            TaskStatus.FAILED: failed,
        }
        log.info(
            "job submitted",
            extra={
                "job_id": job.id,
                "tasks": job.total,
                "batches": len(batches),
                "firestore_reads": ops.reads,
                "firestore_writes": ops.writes,
            },
        )
        return self._view(job, counts)

    def _check_stages(self, request: JobRequest) -> None:
        index = ai_stage_index(request.pipeline)
        if index is not None and self._ai_provider is None:
            reason = "no AI provider is configured here (SCRAPEJOBS_AI_PROVIDER)"
            raise StageUnavailable(f"pipeline[{index}].ai", reason)

    async def _create_and_publish(self, job: JobRecord, batches: list[BatchRecord]) -> int:
        if self._coalescer is not None and self._coalescer.takes(job, batches):
            return await self._coalescer.submit(job, batches)
        await self._store.create_job(job, batches)
        failed = await self._enqueuer.publish(batches)
        await self._store.mark_published([job.id], self._clock())
        return failed

    async def drain(self) -> None:
        """Finish the coalesced submissions under way (shutdown)."""
        if self._coalescer is not None:
            await self._coalescer.drain()

    async def get(self, job_id: str) -> JobView:
        found = await self._store.job_with_counts(job_id)
        if found is None or found[0].expire_at <= self._clock():
            raise JobNotFound(job_id)
        return self._view(*found)

    def _view(self, job: JobRecord, counts: dict[TaskStatus, int]) -> JobView:
        total = sum(counts.values())
        done = total - sum(counts[status] for status in OPEN_TASK_STATUSES)
        if job.status is JobStatus.QUEUED and (done or counts[TaskStatus.RUNNING]):
            # Started: a coalesced small job is not marked running (its batch's claim, which
            # the counts show, is its start).
            job = replace(job, status=JobStatus.RUNNING)
        finished = job.status.terminal and done == total
        progress = self._progress.progress(
            job.id, done, total, job.started_at, finished, self._clock()
        )
        usage, prices = job.ai_usage, self._ai_prices
        cost = None if usage is None or prices is None else prices.cost_of(usage)
        return JobView(job, counts, progress, ai_cost=cost)

    async def list_jobs(
        self, status: JobStatus | None, page_size: int, page_token: str | None
    ) -> Page[JobRecord]:
        page = await self._store.list_jobs(status, page_size, page_token)
        now = self._clock()
        return Page([job for job in page.items if job.expire_at > now], page.next_page_token)

    async def results(
        self, job_id: str, page_size: int, page_token: str | None
    ) -> Page[TaskRecord]:
        await self._job(job_id)
        return await self._store.list_tasks(job_id, page_size, page_token)

    async def all_results(self, job_id: str, page_size: int = EXPORT_PAGE) -> ResultPages:
        """For an export: the job now (``JobNotFound`` before anything is streamed), its
        results in the results API's order as the caller reads on."""
        job = await self._job(job_id)
        return ResultPages(job, self._result_pages(job_id, page_size))

    async def _result_pages(self, job_id: str, page_size: int) -> AsyncIterator[list[TaskRecord]]:
        token: str | None = None
        while True:
            page = await self._store.list_tasks(job_id, page_size, token)
            if page.items:
                yield page.items
            token = page.next_page_token
            if token is None:
                return

    async def cancel(self, job_id: str) -> JobView:
        """Cancel: workers then settle every unstarted task as ``cancelled`` without fetching."""
        job = await self._job(job_id)
        if job.status is JobStatus.COMPLETED:
            raise JobAlreadyFinished(job_id)
        if await self._store.cancel_job(job_id, self._clock()):
            log.info("job cancelled", extra={"job_id": job_id})
            if self._events is not None:
                await self._events.ended(job_id)
        return await self.get(job_id)

    async def resend_lost_webhooks(
        self, older_than: timedelta, within: timedelta, limit: int = 200
    ) -> int:
        """Self-healing for webhook events: jobs that ended between ``within`` and
        ``older_than`` ago whose event was never attempted get it queued again."""
        if self._events is None or self._webhook_log is None:
            return 0
        now = self._clock()
        ended = await self._store.finished_between(now - within, now - older_than, limit)
        resent = 0
        for job in ended:
            if job.spec.webhook is not None:
                resent += await self._events.announce_if_lost(job, self._webhook_log)
        return resent

    async def webhook_deliveries(self, job_id: str, limit: int = 100) -> list[WebhookDelivery]:
        """The job's webhook events and how their delivery went, newest first."""
        await self._job(job_id)
        if self._webhook_log is None:
            return []
        return await self._webhook_log.list(job_id, limit)

    async def existing(self, job_id: str) -> JobView:
        """The job an earlier submission with this id created (a retried keyed or scheduled
        submission). If that submission stopped before its tasks were published (its process
        died, Pub/Sub did not answer), they are published now."""
        view = await self.get(job_id)
        if view.job.publishing:
            await self._publish_open_batches(view.job.id)
            log.warning("published a resumed submission", extra={"job_id": job_id})
        return view

    async def republish_stuck(self, older_than: timedelta, limit: int = 50) -> tuple[int, int]:
        """Recover submissions that stopped between writing batches and publishing them (a
        crash, a deploy, a Pub/Sub outage): publish every batch with open tasks again (a batch
        is claimed by one delivery at a time, so duplicates are harmless). Returns (jobs,
        tasks) republished."""
        jobs = await self._store.stuck_publishing(self._clock() - older_than, limit)
        republished = 0
        for job in jobs:
            republished += await self._publish_open_batches(job.id)
            log.warning("republished a stuck submission", extra={"job_id": job.id})
        return len(jobs), republished

    async def _publish_open_batches(self, job_id: str) -> int:
        """Publish every batch of the job with open tasks, then mark it published; returns
        how many tasks were published."""
        published = 0
        token: str | None = None
        while True:
            page = await self._store.open_batches(job_id, REPUBLISH_PAGE, token)
            tasks = sum(len(batch.open_items) for batch in page.items)
            published += tasks - await self._enqueuer.publish(page.items)
            token = page.next_page_token
            if token is None:
                break
        await self._store.mark_published([job_id], self._clock())
        return published

    async def reconcile(self, stalled_for: timedelta, limit: int = 200) -> Reconciled:
        """Self-healing for lost messages (a broker restart, a purge, an emulator that drops
        what it pushed to a restarting worker): publish again the batches with open tasks that
        nothing has written for ``stalled_for`` and no delivery holds.

        It never fights a healthy backlog: a job that made progress within ``stalled_for``
        is moving and will reach its batches; while any job is moving, a batch never claimed
        may just be waiting in the queue behind others, so it is left alone until the system
        is quiet. Duplicates are harmless (a batch is claimed by one delivery at a time and
        finished tasks are skipped); at most ``limit`` batches per call."""
        now = self._clock()
        cutoff = now - stalled_for
        stalled = await self._store.stalled_batches(cutoff, now, limit)
        if not stalled:
            return Reconciled(0, 0, 0)
        until = now + CLOCK_SKEW
        system_moving = await self._store.progressed_since(cutoff, until)
        by_job: dict[str, list[BatchRecord]] = {}
        for batch in stalled:
            by_job.setdefault(batch.job_id, []).append(batch)
        republish: list[BatchRecord] = []
        for job_id, batches in by_job.items():
            if await self._store.progressed_since(cutoff, until, job_id):
                continue
            republish += [b for b in batches if not (system_moving and _never_claimed(b))]
        failed = await self._enqueuer.publish(republish)
        tasks = sum(len(b.open_items) for b in republish) - failed
        if republish:
            log.warning(
                "republished stalled batches",
                extra={"batches": len(republish), "tasks": tasks, "jobs": len(by_job)},
            )
        return Reconciled(len(republish), tasks, len(stalled) - len(republish))

    async def dead_letters(
        self, job_id: str | None, host: str | None, page_size: int, page_token: str | None
    ) -> Page[TaskRecord]:
        """Dead-lettered tasks, most recent first (of one job, or every job; ``host`` a URL or
        a host key)."""
        if job_id is not None:
            await self._job(job_id)
        return await self._store.tasks_with_status(
            TaskStatus.DEAD_LETTERED, job_id, _host_filter(host), page_size, page_token
        )

    async def replay_dead_letters(
        self, job_id: str | None, host: str | None, limit: int = REPLAY_LIMIT
    ) -> int:
        """Replay up to ``limit`` dead letters matching the filters; returns how many."""
        if job_id is not None:
            await self._job(job_id)
        return await self._replay(TaskStatus.DEAD_LETTERED, job_id, _host_filter(host), limit)

    async def replay_dead_letter(self, job_id: str, task_id: str) -> int:
        """Replay one dead-lettered task (1), or nothing (0) when it is no longer dead-lettered."""
        await self._job(job_id)
        task = await self._store.get_task(job_id, task_id)
        if task is None or task.status is not TaskStatus.DEAD_LETTERED or task.batch_id is None:
            return 0
        return await self._reopen({(job_id, task.batch_id): [task.id]}, TaskStatus.DEAD_LETTERED)

    async def unsuccessful(self, job_id: str, limit: int) -> list[TaskRecord]:
        """The job's failed and dead-lettered tasks (at most ``limit`` of each), most recent
        first: what went wrong, with each task's last error."""
        await self._job(job_id)
        found: list[TaskRecord] = []
        for status in (TaskStatus.DEAD_LETTERED, TaskStatus.FAILED):
            page = await self._store.tasks_with_status(status, job_id, None, limit, None)
            found += page.items
        return sorted(found, key=lambda task: task.updated_at, reverse=True)

    async def retry_job(self, job_id: str, status: TaskStatus) -> int:
        """Replay every task of the job that ended ``status`` (failed or dead-lettered)."""
        await self._job(job_id)
        return await self._replay(status, job_id, None, MAX_JOB_RETRY)

    async def _replay(
        self, status: TaskStatus, job_id: str | None, host: str | None, limit: int
    ) -> int:
        """Replayed tasks go back to ``queued`` with fresh attempts, batch by batch (counts move
        in the same commit), and their batches are published again. Tasks already replayed are
        no longer ``status``: a second replay finds nothing."""
        by_batch: dict[tuple[str, str], list[str]] = {}
        token: str | None = None
        found = 0
        while found < limit:
            page = await self._store.tasks_with_status(
                status, job_id, host, min(REPLAY_PAGE, limit - found), token
            )
            for task in page.items:
                if task.batch_id is not None:
                    by_batch.setdefault((task.job_id, task.batch_id), []).append(task.id)
            found += len(page.items)
            token = page.next_page_token
            if token is None:
                break
        return await self._reopen(by_batch, status)

    async def _reopen(self, by_batch: dict[tuple[str, str], list[str]], status: TaskStatus) -> int:
        """Reopen the given tasks of each (job, batch) that are still ``status``, publish the
        batches again; returns how many tasks went back to ``queued``."""
        reopened: list[BatchRecord] = []
        urls: list[str] = []  # of the tasks that went back to queued
        statuses = frozenset({status})
        for (job, batch_id), task_ids in by_batch.items():
            batch = await self._store.reopen(job, batch_id, task_ids, statuses, self._clock())
            if batch is not None:
                reopened.append(batch)
                wanted = set(task_ids)
                urls += [
                    i.url
                    for i in batch.items
                    if i.task_id in wanted and i.status is TaskStatus.QUEUED
                ]
        replayed = len(urls)
        await self._close_breakers(urls)
        await self._enqueuer.publish(reopened)
        if replayed:
            log.info("tasks replayed", extra={"tasks": replayed, "status": status.value})
        return replayed

    async def _close_breakers(self, urls: list[str]) -> None:
        """A replay is the user saying "try again now": the replayed tasks' hosts whose breaker
        is open are tried at once, before the batches are published; failures reopen them."""
        if self._host_gate is None:
            return
        hosts: set[str] = set()
        for url in urls:
            with contextlib.suppress(ValueError):
                hosts.add(host_key(url))
        now = self._clock()
        for host in sorted(hosts):
            if await self._host_gate.close_breaker(host, now):
                log.info("breaker closed by a replay", extra={"host": origin_url(host)})

    async def delete(self, job_id: str) -> None:
        """Delete a finished job and every document under it (results, batches, counts)."""
        job = await self._job(job_id)
        if not job.status.terminal:
            raise JobStillRunning(job_id)
        await self._store.delete_job(job_id)
        log.info("job deleted", extra={"job_id": job_id})

    async def _job(self, job_id: str) -> JobRecord:
        """The job, unless it does not exist or its retention has run out (Firestore's TTL
        deletes it within about a day: until then it is gone from the API all the same)."""
        job = await self._store.get_job(job_id)
        if job is None or job.expire_at <= self._clock():
            raise JobNotFound(job_id)
        return job

    def _new_job(
        self,
        request: JobRequest,
        job_id: str,
        trigger: str | None,
        batches: list[BatchRecord],
        now: datetime,
    ) -> JobRecord:
        return JobRecord(
            id=job_id,
            status=JobStatus.QUEUED,
            spec=JobSpec.from_request(request),
            created_at=now,
            updated_at=now,
            expire_at=now + self._retention_of(request),
            labels=dict(request.labels),
            total=sum(len(batch.items) for batch in batches),
            kind="crawl" if request.crawl is not None else "urls",
            trigger=trigger,
            publishing=True,
            counter_shards=shards_for(len(batches)),
        )

    def _new_batches(self, job_id: str, request: JobRequest, now: datetime) -> list[BatchRecord]:
        """One task per URL, in batches; a crawl starts with its start URL, keyed as workers
        key pages."""

        def task_id(index: int, url: str) -> str:
            if request.crawl is not None:
                return crawl_task_id(job_id, url)
            return task_id_for(job_id, str(index))

        items = [
            BatchItem(task_id=task_id(index, url), url=url, index=index)
            for index, url in enumerate(request.target_urls())
        ]
        expire_at = now + self._retention_of(request)
        return plan_batches(job_id, items, self._batch_size, now, expire_at, lane=request.lane())

    def _retention_of(self, request: JobRequest) -> timedelta:
        days = request.options.retention_days
        return timedelta(days=days) if days is not None else self._retention
