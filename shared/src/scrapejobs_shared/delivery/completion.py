"""The one job-completion check: a job whose last open task settled becomes ``completed``."""

from __future__ import annotations

import logging

from scrapejobs_shared.delivery.job_events import JobEvents
from scrapejobs_shared.domain.clock import Clock
from scrapejobs_shared.domain.jobspec import JobSpec
from scrapejobs_shared.domain.statuses import JobStatus
from scrapejobs_shared.ports.jobs import Jobs

log = logging.getLogger(__name__)


async def complete_if_done(
    store: Jobs,
    job_id: str,
    clock: Clock,
    events: JobEvents | None = None,
    spec: JobSpec | None = None,
    no_open_tasks: bool = False,
    completed: bool = False,
) -> bool:
    """Move the job to ``completed`` when no task is open (a cancelled job stays cancelled).
    Safe to call concurrently and repeatedly: the status only moves forward, and only the
    call that moved it announces it (``events``; given the job's ``spec``, a job without a
    webhook is not read again to find that out). ``no_open_tasks``: the caller knows that
    none is left (the one batch of a coalesced job has just closed), so the counts are not
    read. ``completed``: the caller's settle completed the job itself (a job holding its
    batch: ``Settled.job_completed``); it is only announced."""
    if completed:
        moved = True
    elif not no_open_tasks and await store.has_open_tasks(job_id):
        return False
    else:
        moved = await store.set_job_status(job_id, JobStatus.COMPLETED, clock())
    if moved:
        log.info("job completed", extra={"job_id": job_id})
        if events is not None and (spec is None or spec.webhook is not None):
            await events.ended(job_id)
    return moved
