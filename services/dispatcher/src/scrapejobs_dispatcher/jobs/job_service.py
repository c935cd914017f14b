"""Jobs as users follow them: read, list, cancel, delete, and the webhook events of a job;
orchestration over the store and publisher ports. Jobs come in through
``submission/intake.py``; recovery (republish, reconcile, replays) is recovery.py; export is
job_export.py."""

from __future__ import annotations

import logging
from dataclasses import dataclass, replace
from datetime import timedelta

from scrapejobs_dispatcher.jobs.job_errors import (
    JobAlreadyFinished,
    JobNotFound,
    JobStillRunning,
    live_job,
    visible,
)
from scrapejobs_dispatcher.jobs.job_parts import JobParts
from scrapejobs_dispatcher.rules.job_usage import reservation_of, unused_of
from scrapejobs_shared.delivery.batching import (
    DEFAULT_BATCH_SIZE,
    HELD_BATCH_SIZE,
)
from scrapejobs_shared.domain.model_usage import ModelPrices
from scrapejobs_shared.domain.progress import Progress, ProgressEstimator
from scrapejobs_shared.domain.records import (
    JobRecord,
    TaskRecord,
)
from scrapejobs_shared.domain.statuses import OPEN_TASK_STATUSES, JobStatus, TaskStatus
from scrapejobs_shared.domain.tenancy import Caller
from scrapejobs_shared.ports.job_store import Page
from scrapejobs_shared.ports.page import PageRequest
from scrapejobs_shared.ports.webhooks import WebhookDelivery

log = logging.getLogger(__name__)
RELEASE_PAGE = 100  # held batches released per store call (a cancel releases them all)
RECORD_LEASE = timedelta(minutes=1)  # a recorded job's claim: settled at once


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

    @property
    def charged(self) -> int:
        """Credits charged so far (usage.py): its tasks that ran to an outcome, less those that
        ran without a charge, and what else they used costs (Metered.credits)."""
        ran = sum(n for s, n in self.counts.items() if s.terminal and s is not TaskStatus.CANCELLED)
        return max(0, ran - self.job.uncharged) + self.job.metered.credits


@dataclass(frozen=True, slots=True)
class JobPolicy:
    """How jobs are kept and cut into batches (the deployment's settings)."""

    retention: timedelta  # a job's unless its options say
    batch_size: int = DEFAULT_BATCH_SIZE
    # small jobs submitted within this window share one commit and one message (None: never)
    coalesce_window_s: float | None = None
    coalesce_busy_window_s: float = 0.0
    # a job's batches of one host in the broker at once, the others held and released by the
    # workers as earlier ones finish (0: all at once; ``delivery.batching.hold_beyond``)
    host_window: int = 0
    held_batch_size: int = HELD_BATCH_SIZE  # the batch size of a job that holds some
    ai_prices: ModelPrices | None = None  # what model tokens cost (a job's cost; None: unshown)


class JobService:
    """Jobs once submitted: read, list, their results, cancel, delete, their webhook
    deliveries. Jobs come in through ``submission/intake.py`` (``JobIntake``, this service
    with the intake's methods)."""

    def __init__(self, parts: JobParts, policy: JobPolicy) -> None:
        self._rules = parts.rules
        self._held = parts.held
        self._ai_prices = policy.ai_prices
        self._store = parts.store
        self._events = parts.enqueuer.events
        self._webhook_log = parts.webhook_log
        self._enqueuer = parts.enqueuer
        self._clock = parts.enqueuer.clock
        self._progress = ProgressEstimator()

    async def get(self, job_id: str, caller: Caller | None) -> JobView:
        """The job with its counts; ``JobNotFound`` also for another tenant's (``caller``
        None: the system's own look)."""
        found = await self._store.job_with_counts(job_id)
        if found is None or found[0].expire_at <= self._clock() or not visible(found[0], caller):
            raise JobNotFound(job_id)
        return self.view(*found)

    def view(self, job: JobRecord, counts: dict[TaskStatus, int]) -> JobView:
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
        self,
        status: JobStatus | None,
        page_size: int,
        page_token: str | None,
        tenant: str | None,
    ) -> Page[JobRecord]:
        """Jobs newest first, of ``tenant`` (None: every tenant's)."""
        page = await self._store.list_jobs(status, PageRequest(page_size, page_token), tenant)
        now = self._clock()
        return Page([job for job in page.items if job.expire_at > now], page.next_page_token)

    async def results(
        self, job_id: str, page_size: int, page_token: str | None, caller: Caller | None
    ) -> Page[TaskRecord]:
        await self._job(job_id, caller)
        return await self._store.list_tasks(job_id, page_size, page_token)

    async def cancel(self, job_id: str, caller: Caller | None) -> JobView:
        """Cancel: workers then settle every unstarted task as ``cancelled`` without fetching."""
        job = await self._job(job_id, caller)
        if job.status is JobStatus.COMPLETED:
            raise JobAlreadyFinished(job_id)
        if await self._store.cancel_job(job_id, self._clock()):
            log.info("job cancelled", extra={"job_id": job_id})
            await self._release_all_held(job_id)  # their tasks end cancelled at once
            if self._events is not None:
                await self._events.ended(job_id)
        view = await self.get(job_id, caller)
        await self._rules.release(reservation_of(view.job), unused_of(view.job, view.counts))
        return view

    async def _release_all_held(self, job_id: str) -> None:
        """The job's held and waiting batches published now: their tasks end cancelled."""
        if self._held is None:
            return
        while released := await self._held.release(job_id, None, self._clock(), RELEASE_PAGE):
            await self._enqueuer.publish(released)
        for batch in await self._held.wake(job_id, None, self._clock()):
            await self._enqueuer.republish(batch, batch.wait_deferrals)

    async def webhook_deliveries(
        self, job_id: str, caller: Caller | None, limit: int = 100
    ) -> list[WebhookDelivery]:
        """The job's webhook events and how their delivery went, newest first."""
        await self._job(job_id, caller)
        if self._webhook_log is None:
            return []
        return await self._webhook_log.list(job_id, limit)

    async def delete(self, job_id: str, caller: Caller | None) -> None:
        """Delete a finished job and every document under it (results, batches, counts)."""
        job = await self._job(job_id, caller)
        if not job.status.terminal:
            raise JobStillRunning(job_id)
        await self._store.delete_job(job_id)
        log.info("job deleted", extra={"job_id": job_id})

    async def _job(self, job_id: str, caller: Caller | None) -> JobRecord:
        return await live_job(self._store, job_id, self._clock(), caller)
