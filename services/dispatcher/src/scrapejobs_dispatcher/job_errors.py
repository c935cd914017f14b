"""What the job services raise for the routes to answer (errors.py maps each to its status),
and the one lookup of a job that raises ``JobNotFound``."""

from __future__ import annotations

from datetime import datetime

from scrapejobs_shared.domain.records import JobRecord
from scrapejobs_shared.domain.tenancy import Caller
from scrapejobs_shared.ports.dependency_unavailable import DependencyUnavailable
from scrapejobs_shared.ports.job_store import JobStore


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


class UnavailableHere(ValueError):
    """A request this deployment cannot or will not serve (an ``ai`` stage with no AI provider
    configured, a certificate check turned off where the deployment refuses it): a 422 naming
    the field and the setting."""

    def __init__(self, field: str, reason: str) -> None:
        super().__init__(f"{field}: {reason}")
        self.field = field


class OverLimit(UnavailableHere):
    """A request past one of this deployment's limits (a tenant's monitors, a check's pages):
    a 422 naming the field and the setting."""


async def live_job(
    store: JobStore, job_id: str, now: datetime, caller: Caller | None = None
) -> JobRecord:
    """The job, unless it does not exist, its retention has run out (Firestore's TTL
    deletes it within about a day: until then it is gone from the API all the same), or it
    belongs to a tenant ``caller`` may not see: another tenant's job is not found, exactly as
    one that does not exist (``caller`` None: the system's own look)."""
    job = await store.get_job(job_id)
    if job is None or job.expire_at <= now or not visible(job, caller):
        raise JobNotFound(job_id)
    return job


def visible(job: JobRecord, caller: Caller | None) -> bool:
    return caller is None or caller.sees(job.tenant)
