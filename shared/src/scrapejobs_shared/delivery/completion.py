"""The one job-completion check: a job whose last open task settled becomes ``completed``."""

from __future__ import annotations

import logging

from scrapejobs_shared.domain.clock import Clock
from scrapejobs_shared.domain.statuses import JobStatus
from scrapejobs_shared.ports.job_store import JobStore

log = logging.getLogger(__name__)


async def complete_if_done(store: JobStore, job_id: str, clock: Clock) -> bool:
    """Move the job to ``completed`` when no task is open (a cancelled job stays cancelled).
    Safe to call concurrently and repeatedly: the status only moves forward."""
    if await store.has_open_tasks(job_id):
        return False
    if await store.set_job_status(job_id, JobStatus.COMPLETED, clock()):
        log.info("job completed", extra={"job_id": job_id})
        return True
    return False
