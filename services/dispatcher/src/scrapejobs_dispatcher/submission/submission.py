"""A job as it is submitted, built once where it enters (``/v1/jobs``, ``/v1/scrape``, the
``/v2`` routes, a schedule's trigger, a monitor's check) and handed whole to
``JobService.submit``: what to run, for whom, and what makes a retried submission find the job
its first one created."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

from scrapejobs_shared.domain.jobspec import JobRequest
from scrapejobs_shared.domain.page_validators import PageValidators
from scrapejobs_shared.domain.tenancy import DEFAULT_TENANT


@dataclass(frozen=True, slots=True)
class Submission:
    request: JobRequest
    tenant: str = DEFAULT_TENANT
    # derived from a scheduler's trigger, an idempotency key or a monitor's check (a retry
    # finds the job the first submission created); None: a new job
    job_id: str | None = None
    trigger: str | None = None  # the schedule's run or the monitor it comes from
    key_fingerprint: str | None = None  # an idempotency key's request body digest
    # a monitor check's: each page's validators by URL, asked with conditionally
    validators: Mapping[str, PageValidators] | None = None
