"""A keyed submission whose process died between its commit and its answer: the key's job id
is derived from the key, so the client's retry finds that job instead of submitting another;
a coalesced job holds its key by its creation, without a reservation (in-memory adapters)."""

from __future__ import annotations

import asyncio
from dataclasses import replace
from datetime import UTC, datetime, timedelta

import pytest
from opentelemetry.trace import NoOpTracer

from scrapejobs_dispatcher.jobs.job_parts import JobParts
from scrapejobs_dispatcher.jobs.job_service import JobPolicy, JobView
from scrapejobs_dispatcher.submission.idempotent import (
    IdempotencyKeyInFlight,
    IdempotencyKeyReused,
    IdempotentSubmission,
)
from scrapejobs_dispatcher.submission.intake import JobIntake
from scrapejobs_dispatcher.submission.submission import Submission
from scrapejobs_shared.adapters.memory.idempotency import MemoryIdempotencyKeys
from scrapejobs_shared.adapters.memory.job_store import MemoryJobStore
from scrapejobs_shared.adapters.memory.publisher import MemoryTaskPublisher
from scrapejobs_shared.delivery.enqueue import Enqueuer
from scrapejobs_shared.domain.jobspec import JobRequest
from scrapejobs_shared.domain.tenancy import DEFAULT_TENANT, Caller, Role

T0 = datetime(2026, 11, 25, 12, 0, tzinfo=UTC)
REQUEST = JobRequest.model_validate({"url": "http://shop.example/p/1"})


TEAM = Caller(DEFAULT_TENANT, Role.MEMBER)


class Clock:
    def __init__(self) -> None:
        self.now = T0

    def __call__(self) -> datetime:
        return self.now


class DiesAfterCommit(JobIntake):
    """The process dies once the job is committed and published: no answer, no key done."""

    async def submit(self, submission: Submission) -> JobView:
        await super().submit(submission)
        raise SystemExit("killed")


def submissions(jobs: type[JobIntake], store, keys, clock, window_s=None) -> IdempotentSubmission:  # type: ignore[no-untyped-def]
    policy = JobPolicy(timedelta(days=1), coalesce_window_s=window_s)
    enqueuer = Enqueuer(store, MemoryTaskPublisher(), clock, NoOpTracer())
    service = jobs(JobParts(store, enqueuer), policy)
    return IdempotentSubmission(
        service, keys, clock, timedelta(days=1), stale_after=timedelta(seconds=30)
    )


async def _died(store: MemoryJobStore, keys: MemoryIdempotencyKeys, clock: Clock) -> None:
    with pytest.raises(SystemExit):
        await submissions(DiesAfterCommit, store, keys, clock).submit(
            Submission(REQUEST, TEAM.tenant), "order-1"
        )
    assert len(store.jobs) == 1  # committed, never answered; the key still in flight


async def test_a_retry_while_the_key_is_in_flight_finds_the_committed_job() -> None:
    store, keys, clock = MemoryJobStore(), MemoryIdempotencyKeys(), Clock()
    await _died(store, keys, clock)
    retry = await submissions(JobIntake, store, keys, clock).submit(
        Submission(REQUEST, TEAM.tenant), "order-1"
    )
    assert retry.replayed and list(store.jobs) == [retry.view.job.id]
    again = await submissions(JobIntake, store, keys, clock).submit(
        Submission(REQUEST, TEAM.tenant), "order-1"
    )
    assert again.replayed and again.view.job.id == retry.view.job.id  # the key is done now


async def test_a_retry_after_the_reservation_went_stale_gets_the_same_job() -> None:
    store, keys, clock = MemoryJobStore(), MemoryIdempotencyKeys(), Clock()
    await _died(store, keys, clock)
    [job_id] = store.jobs
    clock.now += timedelta(minutes=1)  # past stale_after: the retry takes the key over
    retry = await submissions(JobIntake, store, keys, clock).submit(
        Submission(REQUEST, TEAM.tenant), "order-1"
    )
    assert retry.replayed and retry.view.job.id == job_id and len(store.jobs) == 1


async def test_a_retry_while_the_first_has_not_committed_yet_is_refused() -> None:
    store, keys, clock = MemoryJobStore(), MemoryIdempotencyKeys(), Clock()
    release = asyncio.Event()

    class SlowToCommit(JobIntake):
        async def submit(self, submission: Submission) -> JobView:
            await release.wait()
            return await super().submit(submission)

    first = asyncio.ensure_future(
        submissions(SlowToCommit, store, keys, clock).submit(
            Submission(REQUEST, TEAM.tenant), "order-2"
        )
    )
    await asyncio.sleep(0)
    with pytest.raises(IdempotencyKeyInFlight):  # no job has the key's id yet
        await submissions(JobIntake, store, keys, clock).submit(
            Submission(REQUEST, TEAM.tenant), "order-2"
        )
    release.set()
    assert not (await first).replayed and len(store.jobs) == 1


class CountingKeys(MemoryIdempotencyKeys):
    def __init__(self) -> None:
        super().__init__()
        self.reservations = 0

    async def reserve(self, *args, **kwargs):  # type: ignore[no-untyped-def]
        self.reservations += 1
        return await super().reserve(*args, **kwargs)


async def test_a_coalesced_job_holds_its_key_by_its_creation() -> None:
    """No reservation: the job, created in its group's commit, keeps the body's fingerprint;
    a retry replays it, another body with the key is refused, two at once make one job."""
    store, keys, clock = MemoryJobStore(), CountingKeys(), Clock()
    coalesced = submissions(JobIntake, store, keys, clock, window_s=0.01)
    first, twin = await asyncio.gather(
        coalesced.submit(Submission(REQUEST, TEAM.tenant), "order-3"),
        coalesced.submit(Submission(REQUEST, TEAM.tenant), "order-3"),
    )
    assert {first.replayed, twin.replayed} == {False, True}  # at once: both answer the job
    assert first.view.job.id == twin.view.job.id and len(store.jobs) == 1
    [job] = store.jobs.values()
    assert job.key_fingerprint is not None
    retry = await coalesced.submit(Submission(REQUEST, TEAM.tenant), "order-3")
    assert retry.replayed and retry.view.job.id == job.id
    other = JobRequest.model_validate({"url": "http://shop.example/p/2"})
    with pytest.raises(IdempotencyKeyReused):
        await coalesced.submit(Submission(other, TEAM.tenant), "order-3")
    big = JobRequest.model_validate({"urls": [f"http://shop.example/p/{n}" for n in range(300)]})
    with pytest.raises(IdempotencyKeyReused):  # reserved, then told apart by the fingerprint
        await coalesced.submit(Submission(big, TEAM.tenant), "order-3")
    assert keys.reservations == 1 and len(store.jobs) == 1
    assert (
        await coalesced.submit(Submission(big, TEAM.tenant), "order-4")
    ).view.job.key_fingerprint is not None


async def test_a_coalesced_job_from_before_fingerprints_is_decided_by_its_key() -> None:
    store, keys, clock = MemoryJobStore(), MemoryIdempotencyKeys(), Clock()
    first = await submissions(JobIntake, store, keys, clock).submit(
        Submission(REQUEST, TEAM.tenant), "order-5"
    )
    job = store.jobs[first.view.job.id]
    store.jobs[job.id] = replace(job, key_fingerprint=None)  # written by an earlier version
    coalesced = submissions(JobIntake, store, keys, clock, window_s=0.01)
    retry = await coalesced.submit(Submission(REQUEST, TEAM.tenant), "order-5")
    assert retry.replayed and retry.view.job.id == job.id
    other = JobRequest.model_validate({"url": "http://shop.example/p/2"})
    with pytest.raises(IdempotencyKeyReused):
        await coalesced.submit(Submission(other, TEAM.tenant), "order-5")
