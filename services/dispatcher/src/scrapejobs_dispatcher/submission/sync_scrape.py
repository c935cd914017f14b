"""A single page answered in the request: ``POST /v1/scrape`` runs a one-URL job through the
same queue, worker, politeness and safety as any job, and waits for its result (``run``: any
job, waited for the same way; Firecrawl's /v2/map waits for its few pages so).

The wait reads the job document only (one read per look), first after 10 ms, then at doubling
intervals up to 250 ms, so a page that takes 100 ms costs about four reads and one that takes
seconds about four per second. Past ``timeout_s`` the caller gets the job's id instead: the job
goes on and stays queryable. A scrape whose result is not to be kept (an option family's
``keeps_result``: zero data retention) has its job deleted once its answer is read, or
cancelled and deleted when the wait runs out (``ScrapeNotKept``).
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field

from scrapejobs_dispatcher.rules.served_options import ServedOptions
from scrapejobs_dispatcher.submission.idempotent import IdempotentSubmission
from scrapejobs_dispatcher.submission.submission import Submission
from scrapejobs_shared.domain.clock import Clock, utc_now
from scrapejobs_shared.domain.jobspec import ScrapeRequest
from scrapejobs_shared.domain.records import JobRecord, TaskRecord
from scrapejobs_shared.errors import TimedOut
from scrapejobs_shared.options import OPTIONS
from scrapejobs_shared.ports.job_store import JobReads

FIRST_LOOK_S = 0.01
LONGEST_PAUSE_S = 0.25


@dataclass(frozen=True, slots=True)
class Scraped:
    job: JobRecord  # as the last look read it: ended
    result: TaskRecord | None  # None: the job ended before its task had a result (cancelled)


class ScrapeTimedOut(TimedOut):
    """No result within ``timeout_s``: the job goes on (its routes answer what follows)."""

    def __init__(self, job_id: str, timeout_s: float) -> None:
        super().__init__(job_id)
        self.job_id = job_id
        self.timeout_s = timeout_s


class ScrapeNotKept(TimedOut):
    """No result within the wait for a scrape whose result is not to be kept: its job was
    cancelled and deleted, so nothing of it is left to ask for (a ``408``)."""

    status = 408

    def __init__(self, job_id: str, timeout_s: float) -> None:
        super().__init__(
            f"no result within {timeout_s:g} s; the job {job_id} was cancelled and deleted "
            "(its result is not kept: zero data retention)"
        )


@dataclass(eq=False)
class SyncScrape:
    submissions: IdempotentSubmission
    store: JobReads
    max_wait_s: float
    sleep: Callable[[float], Awaitable[None]] = asyncio.sleep
    monotonic: Callable[[], float] = time.monotonic
    served: ServedOptions = field(default_factory=ServedOptions)  # what the families serve
    clock: Clock = utc_now

    async def scrape(self, request: ScrapeRequest, tenant: str, key: str | None = None) -> Scraped:
        """Submit the one-URL job and wait for it to end; ``ScrapeTimedOut`` after
        ``request.timeout_s`` (or the service's ``max_wait_s``, if shorter). ``key``: an
        idempotency key (a keyed submission finds the job an identical earlier request
        started, and waits for it)."""
        await self.served.check_options(request, tenant)
        submission = Submission(request.job_request(), tenant)
        kept = OPTIONS.keeps_result(request)
        try:
            job = await self.run(submission, request.timeout_s, key)
        except ScrapeTimedOut as timed_out:
            if kept:
                raise
            await self.store.cancel_job(timed_out.job_id, self.clock())
            await self.store.delete_job(timed_out.job_id)
            raise ScrapeNotKept(timed_out.job_id, timed_out.timeout_s) from None
        page = await self.store.list_tasks(job.id, 1, None)
        if not kept:
            await self.store.delete_job(job.id)
        return Scraped(job, page.items[0] if page.items else None)

    async def run(self, submission: Submission, wait_s: float, key: str | None = None) -> JobRecord:
        """Submit the job (once per ``key``, if any) and wait for it to end (up to ``wait_s``,
        or the service's ``max_wait_s`` if shorter): the job as it ended; ``ScrapeTimedOut``
        past the wait."""
        wait_s = min(wait_s, self.max_wait_s)
        deadline = self.monotonic() + wait_s
        submitted = (await self.submissions.submit(submission, key)).view
        job_id = submitted.job.id
        pause = FIRST_LOOK_S
        while True:
            left = deadline - self.monotonic()
            if left <= 0:
                raise ScrapeTimedOut(job_id, wait_s)
            await self.sleep(min(pause, left))
            pause = min(pause * 2, LONGEST_PAUSE_S)
            record = await self.store.get_job(job_id)
            if record is not None and record.status.terminal:
                return record
