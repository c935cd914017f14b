"""A keyed submission whose process died between its commit and its answer: the key's job id
is derived from the key, so the client's retry finds that job instead of submitting another
(in-memory adapters)."""

from __future__ import annotations

import asyncio
from datetime import UTC, datetime, timedelta

import pytest
from opentelemetry.trace import NoOpTracer

from scrapejobs_dispatcher.idempotent_submission import (
    IdempotencyKeyInFlight,
    IdempotentSubmission,
)
from scrapejobs_dispatcher.job_service import JobService
from scrapejobs_shared.adapters.memory.idempotency import MemoryIdempotencyKeys
from scrapejobs_shared.adapters.memory.job_store import MemoryJobStore
from scrapejobs_shared.adapters.memory.publisher import MemoryTaskPublisher
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


class DiesAfterCommit(JobService):
    """The process dies once the job is committed and published: no answer, no key done."""

    async def submit(self, request, job_id=None, trigger=None, tenant="default"):  # type: ignore[no-untyped-def]
        await super().submit(request, job_id, trigger, tenant)
        raise SystemExit("killed")


def submissions(jobs: type[JobService], store, keys, clock) -> IdempotentSubmission:  # type: ignore[no-untyped-def]
    service = jobs(store, MemoryTaskPublisher(), clock, timedelta(days=1), NoOpTracer())
    return IdempotentSubmission(
        service, keys, clock, timedelta(days=1), stale_after=timedelta(seconds=30)
    )


async def _died(store: MemoryJobStore, keys: MemoryIdempotencyKeys, clock: Clock) -> None:
    with pytest.raises(SystemExit):
        await submissions(DiesAfterCommit, store, keys, clock).submit(REQUEST, "order-1", TEAM)
    assert len(store.jobs) == 1  # committed, never answered; the key still in flight


async def test_a_retry_while_the_key_is_in_flight_finds_the_committed_job() -> None:
    store, keys, clock = MemoryJobStore(), MemoryIdempotencyKeys(), Clock()
    await _died(store, keys, clock)
    retry = await submissions(JobService, store, keys, clock).submit(REQUEST, "order-1", TEAM)
    assert retry.replayed and list(store.jobs) == [retry.view.job.id]
    again = await submissions(JobService, store, keys, clock).submit(REQUEST, "order-1", TEAM)
    assert again.replayed and again.view.job.id == retry.view.job.id  # the key is done now


async def test_a_retry_after_the_reservation_went_stale_gets_the_same_job() -> None:
    store, keys, clock = MemoryJobStore(), MemoryIdempotencyKeys(), Clock()
    await _died(store, keys, clock)
    [job_id] = store.jobs
    clock.now += timedelta(minutes=1)  # past stale_after: the retry takes the key over
    retry = await submissions(JobService, store, keys, clock).submit(REQUEST, "order-1", TEAM)
    assert retry.replayed and retry.view.job.id == job_id and len(store.jobs) == 1


async def test_a_retry_while_the_first_has_not_committed_yet_is_refused() -> None:
    store, keys, clock = MemoryJobStore(), MemoryIdempotencyKeys(), Clock()
    release = asyncio.Event()

    class SlowToCommit(JobService):
        async def submit(self, request, job_id=None, trigger=None, tenant="default"):  # type: ignore[no-untyped-def]
            await release.wait()
            return await super().submit(request, job_id, trigger, tenant)

    first = asyncio.ensure_future(
        submissions(SlowToCommit, store, keys, clock).submit(REQUEST, "order-2", TEAM)
    )
    await asyncio.sleep(0)
    with pytest.raises(IdempotencyKeyInFlight):  # no job has the key's id yet
        await submissions(JobService, store, keys, clock).submit(REQUEST, "order-2", TEAM)
    release.set()
    assert not (await first).replayed and len(store.jobs) == 1
