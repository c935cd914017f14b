"""Reconcile publishes again the batches whose messages were lost, and leaves moving work
alone (over the in-memory adapters, with a fixed clock)."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

from opentelemetry.trace import NoOpTracer

from scrapejobs_dispatcher.jobs.job_parts import JobParts
from scrapejobs_dispatcher.jobs.recovery import Recovery
from scrapejobs_shared.adapters.memory.job_store import MemoryJobStore
from scrapejobs_shared.adapters.memory.publisher import MemoryTaskPublisher
from scrapejobs_shared.delivery.enqueue import Enqueuer
from scrapejobs_shared.domain.batch_transitions import FinishTask
from scrapejobs_shared.domain.jobspec import JobSpec
from scrapejobs_shared.domain.records import BatchItem, BatchRecord, JobRecord, TaskOutcome
from scrapejobs_shared.domain.statuses import JobStatus, TaskStatus
from scrapejobs_shared.ports.batch_store import BatchClaim, Claimed

T0 = datetime(2026, 11, 22, 12, 0, tzinfo=UTC)
STALLED = timedelta(minutes=10)


class Clock:
    def __init__(self) -> None:
        self.now = T0

    def __call__(self) -> datetime:
        return self.now


async def a_job(store: MemoryJobStore, job_id: str, batches: int, at: datetime) -> None:
    job = JobRecord(job_id, JobStatus.QUEUED, JobSpec(), at, at, at + timedelta(days=1))
    records = [
        BatchRecord(
            job_id,
            f"{job_id}-b{n}",
            (BatchItem(f"{job_id}-t{n}", f"http://a.example/{n}"),),
            at,
            at + timedelta(days=1),
        )
        for n in range(batches)
    ]
    await store.create_job(job, records)


def service(store: MemoryJobStore, clock: Clock) -> tuple[Recovery, MemoryTaskPublisher]:
    publisher = MemoryTaskPublisher()
    return Recovery(JobParts(store, Enqueuer(store, publisher, clock, NoOpTracer()))), publisher


async def test_a_quiet_job_s_stalled_batches_are_published_again() -> None:
    store, clock = MemoryJobStore(), Clock()
    await a_job(store, "lost", batches=2, at=T0)
    jobs, publisher = service(store, clock)
    clock.now = T0 + STALLED + timedelta(seconds=1)

    report = await jobs.reconcile(STALLED)

    assert (report.batches, report.tasks, report.skipped) == (2, 2, 0)
    assert sorted(m.batch_id for m, _ in publisher.batches) == ["lost-b0", "lost-b1"]


async def test_nothing_is_stalled_before_the_threshold() -> None:
    store, clock = MemoryJobStore(), Clock()
    await a_job(store, "young", batches=1, at=T0)
    jobs, publisher = service(store, clock)
    clock.now = T0 + STALLED - timedelta(seconds=1)
    assert (await jobs.reconcile(STALLED)).batches == 0 and publisher.batches == []


async def test_a_batch_held_by_a_delivery_is_left_alone() -> None:
    store, clock = MemoryJobStore(), Clock()
    await a_job(store, "held", batches=1, at=T0)
    late = T0 + STALLED + timedelta(seconds=1)
    await store.claim_batch(BatchClaim("held", "held-b0", T0, late + timedelta(minutes=5)))
    jobs, publisher = service(store, clock)
    clock.now = late
    assert (await jobs.reconcile(STALLED)).batches == 0 and publisher.batches == []


async def test_a_moving_job_is_left_alone() -> None:
    store, clock = MemoryJobStore(), Clock()
    await a_job(store, "moving", batches=2, at=T0)
    late = T0 + STALLED + timedelta(seconds=1)
    claim = await store.claim_batch(
        BatchClaim("moving", "moving-b1", late, late + timedelta(seconds=5))
    )
    assert isinstance(claim, Claimed)
    outcome = TaskOutcome(TaskStatus.SUCCEEDED)
    await store.settle(claim.handle, [FinishTask("moving-t1", outcome)], late)
    jobs, publisher = service(store, clock)
    clock.now = late + timedelta(seconds=1)

    report = await jobs.reconcile(STALLED)

    assert (report.batches, report.skipped) == (0, 1) and publisher.batches == []


async def test_unclaimed_batches_wait_while_other_jobs_move_but_abandoned_ones_do_not() -> None:
    store, clock = MemoryJobStore(), Clock()
    await a_job(store, "queued", batches=1, at=T0)  # may be waiting behind the busy job
    await a_job(store, "abandoned", batches=1, at=T0)
    await store.claim_batch(BatchClaim("abandoned", "abandoned-b0", T0, T0 + timedelta(seconds=40)))
    late = T0 + STALLED + timedelta(seconds=1)
    await a_job(store, "busy", batches=1, at=late)  # the system is moving
    jobs, publisher = service(store, clock)
    clock.now = late + timedelta(seconds=1)

    report = await jobs.reconcile(STALLED)

    assert [m.batch_id for m, _ in publisher.batches] == ["abandoned-b0"]
    assert (report.batches, report.skipped) == (1, 1)


async def test_reconcile_is_bounded_per_call() -> None:
    store, clock = MemoryJobStore(), Clock()
    await a_job(store, "many", batches=5, at=T0)
    jobs, publisher = service(store, clock)
    clock.now = T0 + STALLED + timedelta(seconds=1)
    assert (await jobs.reconcile(STALLED, limit=3)).batches == 3
    assert len(publisher.batches) == 3
