"""Outcome totals, the StatsWriter and StatsReader ports, on the Firestore emulator and the
memory twin: what settles commit, recorded by a process's buffer and put, is what the reader
sums (outcomes, times, ai usage), slot by slot and hour by hour, before and after the rollups;
a put sent again sets the same figures, processes' puts add up; jobs by status, open work,
paused hosts."""

from __future__ import annotations

import random
import uuid
from collections.abc import AsyncIterator
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from typing import cast

import pytest
from google.cloud import firestore

from scrapejobs_shared.adapters.firestore.host_gate import FirestoreHostGate
from scrapejobs_shared.adapters.firestore.job_store import FirestoreJobStore
from scrapejobs_shared.adapters.firestore.outcome_stats import FirestoreStats, FirestoreStatsWriter
from scrapejobs_shared.adapters.firestore.usage_meter import FirestoreUsageMeter
from scrapejobs_shared.adapters.memory.host_gate import MemoryHostGate
from scrapejobs_shared.adapters.memory.job_store import MemoryJobStore
from scrapejobs_shared.delivery.recorded_store import RecordedStore
from scrapejobs_shared.delivery.stats_buffer import StatsBuffer
from scrapejobs_shared.domain.batch_transitions import FinishTask
from scrapejobs_shared.domain.jobspec import JobSpec
from scrapejobs_shared.domain.metered import Metered
from scrapejobs_shared.domain.model_usage import ModelUsage
from scrapejobs_shared.domain.outcome_stats import (
    SLOT,
    Histogram,
    Totals,
    day_of,
    hour_of,
    slot_of,
    slots_between,
)
from scrapejobs_shared.domain.records import BatchItem, BatchRecord, JobRecord, TaskOutcome
from scrapejobs_shared.domain.statuses import JobStatus, TaskStatus
from scrapejobs_shared.extraction.unusable_pages import Unusable
from scrapejobs_shared.politeness.host_gate import HostGate
from scrapejobs_shared.ports.batch_store import BatchClaim
from scrapejobs_shared.ports.job_store import Claimed, JobStore
from scrapejobs_shared.ports.outcome_stats import SourceTotals, StatsReader, StatsWriter
from scrapejobs_shared.ports.usage_meter import UsageMeter


@dataclass
class Adapters:
    store: JobStore
    stats: StatsReader
    gate: HostGate
    meter: UsageMeter
    writer: StatsWriter


@pytest.fixture(params=["memory", pytest.param("firestore", marks=pytest.mark.emulators)])
async def adapters(request: pytest.FixtureRequest) -> AsyncIterator[Adapters]:
    if request.param == "memory":
        store = MemoryJobStore()
        recorded = RecordedStore(store, StatsBuffer(store, every_s=0))
        yield Adapters(cast(JobStore, recorded), store, MemoryHostGate(), store, store)
        return
    stack = request.getfixturevalue("stack")
    client = firestore.AsyncClient(project=stack.config.project_id)
    writer = FirestoreStatsWriter(client)
    yield Adapters(
        cast(JobStore, RecordedStore(FirestoreJobStore(client), StatsBuffer(writer, every_s=0))),
        FirestoreStats(client),
        FirestoreHostGate(client),
        FirestoreUsageMeter(client, shards=4),
        writer,
    )
    client.close()


def an_hour_of_our_own() -> datetime:
    """An hour no other test writes outcomes into (the emulator is shared by the suite)."""
    return datetime(2031, 1, 1, tzinfo=UTC) + timedelta(hours=random.randrange(200_000))


async def settle_at(
    store: JobStore,
    outcomes: list[TaskStatus],
    at: datetime,
    created: datetime,
    errors: dict[int, str] | None = None,
) -> None:
    """``outcomes`` settled at ``at``; ``errors``: the error of some of them, by index."""
    job_id = uuid.uuid4().hex
    batch = BatchRecord(
        job_id=job_id,
        id="b0",
        items=tuple(
            BatchItem(f"t{i}", f"http://h.example/{i}", index=i) for i in range(len(outcomes))
        ),
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
        total=len(outcomes),
    )
    await store.create_job(job, [batch])
    claim = await store.claim_batch(BatchClaim(job_id, "b0", at, at + timedelta(seconds=30)))
    assert isinstance(claim, Claimed)
    changes = [
        FinishTask(
            f"t{i}",
            TaskOutcome(status, elapsed_ms=40 + i, error=(errors or {}).get(i)),
            service_ms=300 + i,
            usage=ModelUsage(calls=1, cached=i % 2, input_tokens=100 + i, output_tokens=10),
        )
        for i, status in enumerate(outcomes)
    ]
    # two commits, as a batch that flushes while it runs
    await store.settle(claim.handle, changes[: len(changes) // 2], at, at + timedelta(seconds=30))
    await store.settle(claim.handle, changes[len(changes) // 2 :], at, None)


async def test_what_settles_commit_is_what_the_reader_sums(adapters: Adapters) -> None:
    hour = an_hour_of_our_own()
    first, second = hour + timedelta(minutes=7), hour + timedelta(minutes=31)
    ok, bad, dead = TaskStatus.SUCCEEDED, TaskStatus.FAILED, TaskStatus.DEAD_LETTERED
    await settle_at(adapters.store, [ok] * 5 + [bad] * 2, first, hour)
    await settle_at(adapters.store, [ok] * 3 + [dead], second, hour)

    live = hour + timedelta(minutes=40)  # inside the hour: nothing may be rolled up yet
    slots = await adapters.stats.slot_totals(slots_between(hour, live), live)
    assert slots[slot_of(first)].count(ok) == 5 and slots[slot_of(first)].count(bad) == 2
    assert slots[slot_of(second)].count(dead) == 1
    assert sum(t.processed for t in slots.values()) == 11
    [in_hour] = (await adapters.stats.hour_totals([hour], live)).values()
    assert in_hour.count(ok) == 8 and in_hour.service.count == 11 and in_hour.fetch.count == 11
    assert in_hour.service.sum_ms == sum(300 + i for i in range(7)) + sum(300 + i for i in range(4))
    tokens_in = sum(100 + i for i in range(7)) + sum(100 + i for i in range(4))
    assert in_hour.ai == ModelUsage(
        calls=11, cached=3 + 2, input_tokens=tokens_in, output_tokens=110
    )

    later = hour + timedelta(hours=3)  # final: read once from the shards, then from rollups
    for _ in range(2):
        [rolled] = (await adapters.stats.hour_totals([hour], later)).values()
        assert rolled == in_hour
        again = await adapters.stats.slot_totals(
            slots_between(hour, hour + timedelta(minutes=55)), later
        )
        assert again[slot_of(first)] == slots[slot_of(first)]
        assert all(t.empty for s, t in again.items() if s not in (slot_of(first), slot_of(second)))


async def test_puts_set_each_process_figures_and_processes_add_up(adapters: Adapters) -> None:
    hour = an_hour_of_our_own()
    tenant = f"t{random.randrange(10**9)}"
    ok = TaskStatus.SUCCEEDED

    def done(n: int) -> list[SourceTotals]:
        return [SourceTotals(hour, tenant, Totals({ok: n}, fetch=Histogram.of([50] * n)))]

    await adapters.writer.put("p1", done(2))
    await adapters.writer.put("p1", done(5))  # the same process, later: its whole figures
    await adapters.writer.put("p1", done(5))  # sent again (an answer lost): nothing more
    await adapters.writer.put("p2", done(1))  # another process
    live = hour + timedelta(minutes=3)
    [theirs] = (await adapters.stats.slot_totals([hour], live, tenant)).values()
    assert theirs.count(ok) == 6 and theirs.fetch.count == 6
    [everyone] = (await adapters.stats.slot_totals([hour], live)).values()
    assert everyone.count(ok) >= 6


async def test_days_sum_their_hours_and_outlive_them(adapters: Adapters) -> None:
    day = day_of(an_hour_of_our_own())
    hour = day + timedelta(hours=5)
    ok, bad = TaskStatus.SUCCEEDED, TaskStatus.FAILED
    unusable = {3: "challenge: Cloudflare", 4: "empty_content: no main content"}
    await settle_at(
        adapters.store, [ok] * 3 + [bad] * 3, hour + timedelta(minutes=7), hour, unusable
    )
    await settle_at(adapters.store, [ok], hour + timedelta(hours=2), hour)

    live = hour + timedelta(hours=3)  # the day is under way: summed, not kept
    [today] = (await adapters.stats.day_totals([day], live)).values()
    assert today.count(ok) == 4 and today.count(bad) == 3 and today.fetch.count == 7
    assert today.unusable == {Unusable.CHALLENGE: 1, Unusable.EMPTY_CONTENT: 1}
    assert today.unbilled == 2 and today.ai.input_tokens == sum(100 + i for i in range(6)) + 100

    for later in (day + timedelta(days=2), day + timedelta(days=60)):  # past the hours' 35 days
        [kept] = (await adapters.stats.day_totals([day], later)).values()
        assert kept == today
    empty = datetime(2070, 1, 1, tzinfo=UTC) + timedelta(days=random.randrange(3000))  # no one's
    assert (await adapters.stats.day_totals([empty], empty + timedelta(days=2)))[empty].empty


async def test_what_is_metered_beside_pages_is_summed_with_them(adapters: Adapters) -> None:
    """A tenant's searches (usage_meter.py) in its totals and everyone's, as credits."""
    hour = an_hour_of_our_own()
    tenant = f"searcher{random.randrange(10**9)}"
    await adapters.meter.meter(tenant, Metered(searches=1, search_credits=1), hour)
    await adapters.meter.meter(tenant, Metered(searches=1, search_credits=2), hour + SLOT)
    await adapters.meter.meter(tenant, Metered(), hour)  # nothing: no write
    live = hour + timedelta(minutes=40)
    [theirs] = (await adapters.stats.hour_totals([hour], live, tenant)).values()
    assert theirs.metered == Metered(searches=2, search_credits=3) and theirs.credits == 3
    assert theirs.processed == 0
    [everyone] = (await adapters.stats.hour_totals([hour], live)).values()
    assert everyone.metered.searches >= 2
    [day] = (await adapters.stats.day_totals([day_of(hour)], live, tenant)).values()
    assert day.credits == 3


async def test_an_empty_span_reads_as_zero(adapters: Adapters) -> None:
    hour = an_hour_of_our_own()
    totals = await adapters.stats.slot_totals([hour, hour + SLOT], hour + timedelta(hours=1))
    assert all(t.empty for t in totals.values()) and len(totals) == 2
    assert (await adapters.stats.hour_totals([hour], hour))[hour].processed == 0
    assert hour_of(hour) == hour


async def test_jobs_by_status_and_open_work(adapters: Adapters) -> None:
    before = await adapters.stats.jobs_by_status()
    created = datetime.now(UTC) - timedelta(minutes=3)
    await settle_at(adapters.store, [TaskStatus.SUCCEEDED], created, created)  # one job, done
    after = await adapters.stats.jobs_by_status()
    assert sum(after.values()) == sum(before.values()) + 1
    work = await adapters.stats.open_work(10_000)
    assert work.queued >= 0 and work.running >= 0 and not work.partial
    await adapters.stats.ping()


async def test_paused_hosts(adapters: Adapters) -> None:
    now = datetime.now(UTC)
    host = f"http~{uuid.uuid4().hex}.example~80"
    await adapters.gate.hold(host, now + timedelta(minutes=2))
    paused = await adapters.gate.paused(now, 1000)
    assert any(p.host == host and p.reason == "held" for p in paused)
