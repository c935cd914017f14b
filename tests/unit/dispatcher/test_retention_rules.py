"""Retention and deletion: an expired job is gone from the API at once; a finished job can be
deleted with everything under it, a running one cannot."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest
from opentelemetry.trace import NoOpTracer

from scrapejobs_dispatcher.jobs.job_errors import JobNotFound, JobStillRunning
from scrapejobs_dispatcher.jobs.job_parts import JobParts
from scrapejobs_dispatcher.jobs.job_service import JobPolicy
from scrapejobs_dispatcher.submission.intake import JobIntake
from scrapejobs_dispatcher.submission.submission import Submission
from scrapejobs_shared.adapters.memory.job_store import MemoryJobStore
from scrapejobs_shared.adapters.memory.publisher import MemoryTaskPublisher
from scrapejobs_shared.delivery.enqueue import Enqueuer
from scrapejobs_shared.domain.jobspec import JobRequest

T0 = datetime(2026, 11, 22, 12, 0, tzinfo=UTC)


class Clock:
    def __init__(self) -> None:
        self.now = T0

    def __call__(self) -> datetime:
        return self.now


def jobs(store: MemoryJobStore, clock: Clock) -> JobIntake:
    policy = JobPolicy(timedelta(days=30))
    enqueuer = Enqueuer(store, MemoryTaskPublisher(), clock, NoOpTracer())
    return JobIntake(JobParts(store, enqueuer), policy)


def request(**options: object) -> JobRequest:
    return JobRequest.model_validate({"urls": ["http://a.example/1"], "options": options})


async def test_a_job_s_retention_comes_from_its_options_or_the_deployment() -> None:
    store, clock = MemoryJobStore(), Clock()
    service = jobs(store, clock)
    short = await service.submit(Submission(request(retention_days=2)))
    default = await service.submit(Submission(request()))
    assert short.job.expire_at == T0 + timedelta(days=2)
    assert default.job.expire_at == T0 + timedelta(days=30)
    assert {b.expire_at for b in store.batches[short.job.id].values()} == {T0 + timedelta(days=2)}

    clock.now = T0 + timedelta(days=2)
    with pytest.raises(JobNotFound):
        await service.get(short.job.id, None)
    with pytest.raises(JobNotFound):
        await service.results(short.job.id, 10, None, None)
    listed = await service.list_jobs(None, 10, None, None)
    assert [j.id for j in listed.items] == [default.job.id]


async def test_a_finished_job_is_deleted_with_everything_under_it() -> None:
    store, clock = MemoryJobStore(), Clock()
    service = jobs(store, clock)
    job = (await service.submit(Submission(request()))).job
    with pytest.raises(JobStillRunning):
        await service.delete(job.id, None)
    await service.cancel(job.id, None)

    await service.delete(job.id, None)

    assert job.id not in store.jobs and job.id not in store.batches
    assert job.id not in store.results
    with pytest.raises(JobNotFound):
        await service.delete(job.id, None)


@pytest.mark.parametrize("days", [0, 3651, "x"])
def test_retention_days_out_of_range_is_refused(days: object) -> None:
    with pytest.raises(ValueError, match="retention_days"):
        request(retention_days=days)
