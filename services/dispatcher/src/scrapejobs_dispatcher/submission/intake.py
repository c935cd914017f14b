"""Jobs coming in: a submission admitted by the rules (rules/), stored with its batches of
tasks and published (small jobs coalesced: coalescer.py), or a one-page job recorded with its
page read here (an upload); a retried submission answered with the job it made. ``JobIntake``
is the job service (jobs/job_service.py) with these."""

from __future__ import annotations

import contextlib
import logging
import uuid
from collections.abc import Awaitable, Callable, Mapping
from dataclasses import replace
from datetime import datetime, timedelta

from opentelemetry.metrics import NoOpMeter

from scrapejobs_dispatcher.jobs.job_errors import JobNotFound, SubmissionUnconfirmed
from scrapejobs_dispatcher.jobs.job_parts import JobParts
from scrapejobs_dispatcher.jobs.job_service import JobPolicy, JobService, JobView
from scrapejobs_dispatcher.jobs.recovery import publish_open_batches
from scrapejobs_dispatcher.rules.rules import Admission
from scrapejobs_dispatcher.submission.coalescer import SubmissionCoalescer
from scrapejobs_dispatcher.submission.job_sources import JobSources, ListedOnly
from scrapejobs_dispatcher.submission.metrics import SubmissionMetrics
from scrapejobs_dispatcher.submission.submission import Submission
from scrapejobs_shared.delivery.batching import hold_beyond, plan_batches, shards_for, size_for
from scrapejobs_shared.delivery.completion import complete_if_done
from scrapejobs_shared.domain.batch_transitions import FinishTask
from scrapejobs_shared.domain.crawl_identity import crawl_task_id
from scrapejobs_shared.domain.jobspec import JobRequest, JobSpec
from scrapejobs_shared.domain.page_validators import PageValidators
from scrapejobs_shared.domain.records import (
    BatchItem,
    BatchRecord,
    JobRecord,
    TaskOutcome,
    task_id_for,
)
from scrapejobs_shared.domain.statuses import JobStatus, TaskStatus
from scrapejobs_shared.domain.tenancy import DEFAULT_TENANT, Caller, Role
from scrapejobs_shared.messaging.task_message import MAX_BATCH_SIZE
from scrapejobs_shared.observability.store_ops import counting
from scrapejobs_shared.options import RENDER
from scrapejobs_shared.ports.batch_store import BatchClaim, Claimed
from scrapejobs_shared.ports.dependency_unavailable import PUBSUB, DependencyUnavailable
from scrapejobs_shared.ports.job_store import JobExists

log = logging.getLogger(__name__)
RECORD_LEASE = timedelta(minutes=1)  # a recorded job's claim: settled at once


class JobIntake(JobService):
    def __init__(
        self,
        parts: JobParts,
        policy: JobPolicy,
        metrics: SubmissionMetrics | None = None,
        sources: JobSources | None = None,
    ) -> None:
        super().__init__(parts, policy)
        self._sources = sources or ListedOnly()
        enqueuer = parts.enqueuer
        self._host_window = policy.host_window if parts.held is not None else 0
        self._tracer = enqueuer.tracer
        self._metrics = metrics or SubmissionMetrics(NoOpMeter("scrapejobs-dispatcher"))
        window_s = policy.coalesce_window_s
        self._coalescer = (
            None
            if window_s is None
            else SubmissionCoalescer(
                parts.store, enqueuer, enqueuer.clock, window_s, policy.coalesce_busy_window_s
            )
        )
        self._retention = policy.retention
        self._batch_size = policy.batch_size
        self._held_batch_size = policy.held_batch_size

    async def submit(self, submission: Submission) -> JobView:
        """Store the job and its batches of tasks, then publish one message per batch.

        A monitor check's job keeps its pages' ``validators``, and a page that did not change
        ends unchanged (page_validators.py). A ``job_id`` derived from a scheduler trigger (or
        an idempotency key, whose request body's digest is ``key_fingerprint``: kept with the
        job) makes a retried request return the job it created the first time instead of
        submitting it twice. A small job is committed and published together with the others
        submitted within the coalescing window (see ``submission_coalescer``). A request whose
        pages a source finds (a search) is given them first (job_sources.py).
        """
        tenant, trigger = submission.tenant, submission.trigger
        if submission.job_id is not None and self._sources.finds(submission.request):
            # a retried one (a monitor's check, a schedule's run): its job, its source (a
            # search) never asked (nor charged) again
            with contextlib.suppress(JobNotFound):
                return replace(await self.existing(submission.job_id, tenant), created=False)
        request = await self._sources.resolved(submission.request, tenant)
        validators = submission.validators
        job_id = submission.job_id or uuid.uuid4().hex
        now = self._clock()
        await self._rules.admit(request, Admission(tenant, request.most_pages(), job_id, now))
        with counting() as ops:
            batches = self._new_batches(job_id, request, now, tenant, validators or {})
            job = self._new_job(
                request, job_id, trigger, batches, now, tenant, validators is not None
            )
            job = replace(job, key_fingerprint=submission.key_fingerprint)
            with self._tracer.start_as_current_span("submit_job", attributes={"job.id": job.id}):
                try:
                    failed = await self._create_and_publish(job, batches)
                except JobExists:
                    log.info(
                        "duplicate submission ignored",
                        extra={"job_id": job.id, "trigger": trigger},
                    )
                    return replace(await self.existing(job.id, tenant), created=False)
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
        return self.view(job, counts)

    async def record(
        self, submission: Submission, read: Callable[[JobSpec], Awaitable[TaskOutcome]]
    ) -> JobView:
        """A one-page job whose page is read here (an upload: uploads/): admitted as a
        submitted job is (its shape, the tenant's quota) before ``read`` gives its outcome,
        then stored, its task settled with that outcome and the job completed, with the
        retention of any job and nothing published (no worker has anything to fetch)."""
        request, tenant = submission.request, submission.tenant
        job_id = submission.job_id or uuid.uuid4().hex
        admission = Admission(tenant, request.most_pages(), job_id, self._clock())
        await self._rules.admit(request, admission)
        try:
            outcome = await read(JobSpec.from_request(request))
        except BaseException:
            await self._rules.release(admission, admission.pages, final=True)
            raise
        now = self._clock()
        batches = self._new_batches(job_id, request, now, tenant)
        job = replace(self._new_job(request, job_id, None, batches, now, tenant), publishing=False)
        await self._store.create_job(job, batches)
        [batch] = batches
        lease = now + RECORD_LEASE
        claim = await self._store.claim_batch(
            BatchClaim(job_id, batch.id, now, lease, mark_started=True)
        )
        if not isinstance(claim, Claimed):  # nothing else knows the job: never so
            raise RuntimeError(f"the recorded job {job_id} could not be claimed: {claim}")
        changes = [FinishTask(item.task_id, outcome, outcome.elapsed_ms) for item in batch.items]
        await self._store.settle(claim.handle, changes, self._clock())
        await complete_if_done(self._store, job_id, self._clock, self._events, job.spec, True)
        self._metrics.submitted(job.total, crawl=False)
        log.info("job recorded", extra={"job_id": job_id, "status": outcome.status.value})
        return await self.get(job_id, Caller(tenant, Role.MEMBER))

    def coalesces(self, request: JobRequest) -> bool:
        """Whether ``request`` is created in one commit with others submitted at the same
        time (submission/coalescer.py): one batch, not a crawl."""
        if self._coalescer is None or request.crawl is not None:
            return False
        if len(request.target_urls()) > self._batch_size:
            return False
        batches = self._new_batches("coalesces", request, self._clock(), DEFAULT_TENANT)
        return len(batches) == 1

    async def _create_and_publish(self, job: JobRecord, batches: list[BatchRecord]) -> int:
        if self._coalescer is not None and self._coalescer.takes(job, batches):
            return await self._coalescer.submit(job, batches)
        await self._store.create_job(job, batches)
        failed = await self._enqueuer.publish([batch for batch in batches if not batch.held])
        await self._store.mark_published([job.id], self._clock())
        return failed

    async def drain(self) -> None:
        """Finish the coalesced submissions under way (shutdown)."""
        if self._coalescer is not None:
            await self._coalescer.drain()

    async def existing(self, job_id: str, tenant: str) -> JobView:
        """The job an earlier submission of ``tenant`` with this id created (a retried keyed
        or scheduled submission). If that submission stopped before its tasks were published
        (its process died, Pub/Sub did not answer), they are published now. A coalesced job
        this process published is left alone: it holds its batch, and stays ``publishing``
        until a worker claims it (a retry reaching another instance publishes it again: a
        duplicate is harmless, a batch being claimed by one delivery)."""
        view = await self.get(job_id, Caller(tenant, Role.MEMBER))
        published = self._coalescer is not None and self._coalescer.published(job_id)
        if view.job.publishing and not published:
            await publish_open_batches(
                self._store, self._store, self._enqueuer, view.job.id, self._clock
            )
            log.warning("published a resumed submission", extra={"job_id": job_id})
        return view

    def _new_job(
        self,
        request: JobRequest,
        job_id: str,
        trigger: str | None,
        batches: list[BatchRecord],
        now: datetime,
        tenant: str,
        conditional: bool = False,
    ) -> JobRecord:
        return JobRecord(
            id=job_id,
            status=JobStatus.QUEUED,
            spec=JobSpec.from_request(request, conditional),
            created_at=now,
            updated_at=now,
            expire_at=now + self._retention_of(request),
            labels=dict(request.labels),
            total=sum(len(batch.items) for batch in batches),
            kind="crawl" if request.crawl is not None else "urls",
            trigger=trigger,
            publishing=True,
            counter_shards=shards_for(
                len(batches), request.crawl.max_pages if request.crawl is not None else 0
            ),
            tenant=tenant,
        )

    def _new_batches(
        self,
        job_id: str,
        request: JobRequest,
        now: datetime,
        tenant: str,
        validators: Mapping[str, PageValidators] | None = None,
    ) -> list[BatchRecord]:
        """One task per URL, in batches; a crawl starts with its start URL, keyed as workers
        key pages."""

        def task_id(index: int, url: str) -> str:
            if request.crawl is not None:
                return crawl_task_id(job_id, url)
            return task_id_for(job_id, str(index))

        items = [
            BatchItem(
                task_id=task_id(index, url),
                url=url,
                index=index,
                validators=(validators or {}).get(url),
            )
            for index, url in enumerate(request.target_urls())
        ]
        expire_at = now + self._retention_of(request)
        size = size_for(items, self._batch_size, self._host_window, self._held_batch_size)
        if validators and RENDER.of(request.options) is None:
            # a monitor's check of pages it has seen: mostly 304s, each a request and no
            # parsing, so the largest batches a message takes: a host's slots change hands
            # between worker processes at each batch (bench/README.md, K)
            size = MAX_BATCH_SIZE
        planned = plan_batches(
            job_id, items, size, now, expire_at, lane=request.lane(), tenant=tenant
        )
        return hold_beyond(planned, self._host_window)

    def _retention_of(self, request: JobRequest) -> timedelta:
        days = request.options.retention_days
        return timedelta(days=days) if days is not None else self._retention
