"""What a job reserved of its tenant's day and what it did not use: its reservation is its most
pages (its URLs, or its crawl's ``max_pages``); the pages it used are its tasks that ran, run or
may still run (a crawl finds no more once it ended or was cancelled), less those that ran
without a charge (reused from the page cache, no response, nothing usable: its tally's
``uncharged``), so the quota counts what ``/v1/usage`` does."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

from scrapejobs_dispatcher.rules.rules import Admission
from scrapejobs_shared.domain.records import JobRecord
from scrapejobs_shared.domain.statuses import OPEN_TASK_STATUSES, JobStatus, TaskStatus
from scrapejobs_shared.ports.jobs import Jobs


@dataclass(frozen=True, slots=True)
class Usage:
    ended: bool  # the job is over: what it did not use, it never will
    unused: int  # pages of its reservation it did not fetch (and will not, once ended)


def reservation_of(job: JobRecord) -> Admission:
    """What the job's submission reserved (daily_quota.py), under the job's id."""
    pages = job.spec.crawl.max_pages if job.spec.crawl is not None else job.total
    return Admission(job.tenant, pages, job.id, job.created_at)


def unused_of(job: JobRecord, counts: Mapping[TaskStatus, int]) -> int:
    """The pages of the job's reservation its tasks did not use: those never queued (a crawl's
    unfound pages), those cancelled, and, once the job is cancelled, those still queued (a
    worker settles them cancelled without a fetch), and those that ran without a charge; other
    queued ones count as used."""
    never = counts.get(TaskStatus.CANCELLED, 0)
    if job.status is JobStatus.CANCELLED:
        never += counts.get(TaskStatus.QUEUED, 0)
    used = max(0, sum(counts.values()) - never - job.uncharged)
    return max(0, reservation_of(job).pages - used)


async def job_usage(store: Jobs, key: str) -> Usage | None:
    """The usage of the job whose id is ``key`` (None: no such job)."""
    found = await store.job_with_counts(key)
    if found is None:
        return None
    job, counts = found
    # a cancelled job's unused pages are known at once: its queued tasks never run
    ended = job.status is JobStatus.CANCELLED or (
        job.status.terminal and not any(counts.get(s, 0) for s in OPEN_TASK_STATUSES)
    )
    return Usage(ended, unused_of(job, counts))
