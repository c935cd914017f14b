"""Stats, history and health over the in-memory adapters (the memory twin writes outcome totals
in the same place the Firestore adapter's commits do: the contract suite checks both)."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest

from scrapejobs_dispatcher.system_health import HealthPolicy, Level, SystemHealth
from scrapejobs_shared.adapters.memory.host_gate import MemoryHostGate
from scrapejobs_shared.adapters.memory.job_store import MemoryJobStore
from scrapejobs_shared.adapters.memory.publisher import MemoryTaskPublisher
from scrapejobs_shared.domain.batch_transitions import FinishTask
from scrapejobs_shared.domain.jobspec import JobSpec
from scrapejobs_shared.domain.records import BatchItem, BatchRecord, JobRecord, TaskOutcome
from scrapejobs_shared.domain.statuses import JobStatus, TaskStatus
from scrapejobs_shared.ports.batch_store import BatchClaim, Claimed
from support.worker_store import as_a_worker

NOW = datetime(2026, 11, 23, 10, 2, tzinfo=UTC)


class Clock:
    def __init__(self, now: datetime) -> None:
        self.now = now

    def __call__(self) -> datetime:
        return self.now


async def add_job(store: MemoryJobStore, job_id: str, n: int, created: datetime) -> BatchRecord:
    batch = BatchRecord(
        job_id=job_id,
        id="b0",
        items=tuple(BatchItem(f"t{i}", f"http://h.example/{i}", index=i) for i in range(n)),
        created_at=created,
        expire_at=created + timedelta(days=30),
    )
    job = JobRecord(
        id=job_id,
        status=JobStatus.QUEUED,
        spec=JobSpec(),
        created_at=created,
        updated_at=created,
        expire_at=created + timedelta(days=30),
        total=n,
    )
    await store.create_job(job, [batch])
    return batch


async def finish(
    store: MemoryJobStore, job_id: str, outcomes: list[TaskStatus], at: datetime
) -> None:
    claim = await store.claim_batch(BatchClaim(job_id, "b0", at, at + timedelta(seconds=30)))
    assert isinstance(claim, Claimed)
    changes = [
        FinishTask(f"t{i}", TaskOutcome(status, elapsed_ms=100), service_ms=200)
        for i, status in enumerate(outcomes)
    ]
    await as_a_worker(store).settle(claim.handle, changes, at, None)


def monitor(store: MemoryJobStore, clock: Clock, gate=None, publisher=None) -> SystemHealth:
    policy = HealthPolicy(min_processed=4, backlog_target_s=60, stuck_after_s=120)
    return SystemHealth(
        store, store, gate or MemoryHostGate(), publisher or MemoryTaskPublisher(), clock, policy
    )


async def test_stats_count_exactly_what_finished_in_the_window() -> None:
    store, clock = MemoryJobStore(), Clock(NOW)
    await add_job(store, "j1", 10, NOW - timedelta(minutes=30))
    outcomes = [TaskStatus.SUCCEEDED] * 6 + [TaskStatus.FAILED] * 2 + [TaskStatus.DEAD_LETTERED]
    await finish(store, "j1", outcomes, NOW - timedelta(minutes=1))

    report = await monitor(store, clock).stats("5m")

    totals = report.totals
    assert totals.count(TaskStatus.SUCCEEDED) == 6 and totals.count(TaskStatus.FAILED) == 2
    assert totals.count(TaskStatus.DEAD_LETTERED) == 1 and totals.error_rate() == 0.3333
    assert report.open.running == 1 and report.open.queued == 0  # the 10th is still running
    assert report.since == datetime(2026, 11, 23, 9, 55, tzinfo=UTC)
    assert report.throughput_per_s == round(9 / 420, 3)
    assert totals.service.mean_ms() == 200 and totals.fetch.percentile_ms(0.95) is not None
    assert report.jobs[JobStatus.QUEUED] == 1


async def test_an_outcome_outside_the_window_is_not_counted() -> None:
    store, clock = MemoryJobStore(), Clock(NOW)
    await add_job(store, "j1", 2, NOW - timedelta(hours=3))
    await finish(store, "j1", [TaskStatus.SUCCEEDED] * 2, NOW - timedelta(hours=2))
    assert (await monitor(store, clock).stats("1h")).totals.processed == 0
    assert (await monitor(store, clock).stats("24h")).totals.processed == 2


async def test_history_has_one_row_per_hour_oldest_first() -> None:
    store, clock = MemoryJobStore(), Clock(NOW)
    await add_job(store, "j1", 4, NOW - timedelta(hours=3))
    await finish(
        store, "j1", [TaskStatus.SUCCEEDED] * 3 + [TaskStatus.FAILED], NOW - timedelta(hours=2)
    )

    rows = await monitor(store, clock).history(4)

    assert [r.hour.hour for r in rows] == [7, 8, 9, 10]
    busy = rows[1]  # 08:02
    assert busy.totals.processed == 4 and busy.success_rate == 0.75
    assert busy.throughput_per_s == round(4 / 3600, 3)
    assert rows[-1].seconds == 120  # the current hour has run 2 minutes


async def test_healthy_when_nothing_is_wrong() -> None:
    store = MemoryJobStore()
    health = await monitor(store, Clock(NOW)).health()
    assert health.status is Level.HEALTHY and health.reasons == []
    assert {c["status"] for c in health.checks.values()} == {"healthy"}


async def test_a_failing_host_degrades_then_makes_it_unhealthy() -> None:
    store, clock = MemoryJobStore(), Clock(NOW)
    await add_job(store, "j1", 10, NOW - timedelta(seconds=30))
    await finish(store, "j1", [TaskStatus.SUCCEEDED] * 8 + [TaskStatus.FAILED] * 2, NOW)
    health = await monitor(store, clock).health()
    assert health.status is Level.DEGRADED
    assert health.reasons == ["error rate 20% over the last 5 minutes"]

    await add_job(store, "j2", 10, NOW - timedelta(seconds=30))
    await finish(store, "j2", [TaskStatus.FAILED] * 10, NOW)
    health = await monitor(store, clock).health()
    assert health.status is Level.UNHEALTHY and "error rate 60%" in health.reasons[0]


async def test_a_stuck_backlog_degrades_and_then_is_unhealthy() -> None:
    store, clock = MemoryJobStore(), Clock(NOW)
    await add_job(store, "j1", 3, NOW - timedelta(seconds=90))
    health = await monitor(store, clock).health()
    assert health.status is Level.DEGRADED
    assert any("queued work waiting 90 s" in r for r in health.reasons)

    clock.now = NOW + timedelta(minutes=10)
    health = await monitor(store, clock).health()
    assert health.status is Level.UNHEALTHY
    assert health.checks["stuck_work"]["status"] == "degraded"  # and nothing wrote it since


async def test_dead_letters_and_open_breakers_degrade() -> None:
    store, clock, gate = MemoryJobStore(), Clock(NOW), MemoryHostGate()
    await add_job(store, "j1", 1, NOW - timedelta(seconds=10))
    await finish(store, "j1", [TaskStatus.DEAD_LETTERED], NOW)
    gate.open_until["http~bad.example~80"] = NOW + timedelta(minutes=1)
    health = await monitor(store, clock, gate=gate).health()
    assert health.status is Level.DEGRADED
    assert health.checks["dead_letters"] == {"status": "degraded", "count": 1}
    assert health.checks["breakers"]["open"] == ["http://bad.example"]
    [paused] = (await monitor(store, clock, gate=gate).stats("5m")).paused
    assert paused.reason == "circuit_open"


@pytest.mark.parametrize("down", ["firestore", "pubsub"])
async def test_an_unreachable_dependency_is_unhealthy(down: str) -> None:
    store, publisher = MemoryJobStore(), MemoryTaskPublisher()
    if down == "firestore":
        store.reachable = False
    else:
        publisher = MemoryTaskPublisher(fail_after=0)
    health = await monitor(store, Clock(NOW), publisher=publisher).health()
    assert health.status is Level.UNHEALTHY
    assert health.checks[down]["status"] == "unhealthy"
    label = {"firestore": "Firestore", "pubsub": "Pub/Sub"}[down]
    assert health.reasons[0].startswith(f"{label} unreachable")
