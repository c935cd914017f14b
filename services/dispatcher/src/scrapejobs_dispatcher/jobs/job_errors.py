"""What the job services raise for the routes to answer (errors.py maps each to its status),
and the one lookup of a job that raises ``JobNotFound``."""

from __future__ import annotations

from datetime import datetime
from typing import Any

from scrapejobs_shared.domain.records import JobRecord
from scrapejobs_shared.domain.tenancy import Caller
from scrapejobs_shared.errors import Conflict, InvalidInput, NotFound, Unavailable
from scrapejobs_shared.ports.dependency_unavailable import DependencyUnavailable
from scrapejobs_shared.ports.jobs import Jobs


class JobNotFound(NotFound):
    template = "job {} not found"


class InvalidFilter(InvalidInput):
    """A list filter that names nothing: a 422 naming the parameter."""

    def __init__(self, parameter: str, reason: str) -> None:
        super().__init__(f"{parameter}: {reason}", parameter)
        self.parameter = parameter


class JobAlreadyFinished(Conflict):
    code = "job_finished"

    template = "job {} has already completed"


UPLOAD_LABEL = "upload"  # the label naming the file a job's one result was read from


class UploadNotFetched(Conflict):
    """A job that read an uploaded file: nothing can fetch its page again."""

    code = "upload_not_fetched"
    template = "job {} read an uploaded file: it cannot be fetched again (upload the file again)"


class SubmissionUnconfirmed(Unavailable):
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

    @property
    def message(self) -> str:
        if self.stored:
            outcome = (
                f"job {self.job_id} is stored and its tasks are published once "
                f"{self.outage.dependency} answers again"
            )
        elif self.stored is None:
            outcome = f"job {self.job_id} may or may not have been stored"
        else:
            outcome = f"job {self.job_id} was not stored"
        return (
            f"{self.outage}: {outcome}. Retry with the same Idempotency-Key and body to get "
            "exactly one job (without a key, GET /v1/jobs/{id} tells whether it exists)"
        )

    def headers(self) -> dict[str, str]:
        return self.outage.headers()

    def details(self) -> dict[str, Any]:
        return self.outage.details() | {"job_id": self.job_id, "stored": self.stored}


class JobStillRunning(Conflict):
    code = "job_running"

    template = "job {} is still running: cancel it, or wait until it ends, then delete it"


async def live_job(
    store: Jobs, job_id: str, now: datetime, caller: Caller | None = None
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
