"""A job's pace is the job's: a slower ``per_host_rps`` paces only its own pages (a gate key of
its own), the host's shared document keeps only the host's pace (the deployment's rate, the
site's Crawl-delay, capped), and nothing the job sets outlives it on shared host state."""

from __future__ import annotations

import asyncio
from datetime import timedelta

import pytest
from opentelemetry.trace import NoOpTracer
from pydantic import ValidationError

from scrapejobs_shared.adapters.memory.held_batches import MemoryHeldBatches
from scrapejobs_shared.adapters.memory.host_gate import MemoryHostGate
from scrapejobs_shared.adapters.memory.job_store import MemoryJobStore
from scrapejobs_shared.adapters.memory.publisher import MemoryTaskPublisher
from scrapejobs_shared.delivery.enqueue import DEFERRALS, Enqueuer
from scrapejobs_shared.domain.jobspec import JobRequest
from scrapejobs_shared.domain.statuses import TaskStatus
from scrapejobs_shared.politeness.host_gate import HostLimits, PausedHost, merge_paused
from scrapejobs_shared.politeness.job_pace import job_pace, job_pace_key
from scrapejobs_shared.politeness.robots_rules import MAX_CRAWL_DELAY_S, RobotsRules
from scrapejobs_shared.ports.dependency_unavailable import DependencyUnavailable
from scrapejobs_worker.batches.batch_waits import (
    BACKOFF_CAP_S,
    FREE_DEFERRALS,
    BatchWaits,
    backoff_s,
)
from support.worker_fakes import NOW, ScriptedFetcher, build_processor, push, setup_job

HOST = "http~a.example~80"
FIELDS = {"h": {"css": "h1::text"}}


async def test_a_slow_job_paces_only_its_own_pages() -> None:
    store, gate = MemoryJobStore(), MemoryHostGate()
    slow = await setup_job(
        store,
        {"url": "http://a.example/", "extract": FIELDS, "options": {"per_host_rps": 0.01}},
        urls=2,
        job_id="slow",
    )
    other = await setup_job(store, {"url": "http://a.example/other"}, job_id="other")
    processor = build_processor(store, ScriptedFetcher(200), lambda: NOW, gate=gate)

    verdict = await processor.handle_push(push(batch=slow))
    assert verdict.ack
    tasks = {i.task_id: i for i in store.batches["slow"]["b"].items}
    assert store.results["slow"]["t"].status is TaskStatus.SUCCEEDED
    assert "job at its own pace" in (tasks["t1"].error or "")  # deferred: its own pace
    assert HOST not in gate.next_at  # the host's shared pace is untouched
    assert gate.next_at[job_pace_key("slow", HOST)] == NOW + timedelta(seconds=100)

    assert (await processor.handle_push(push(batch=other))).ack
    assert store.results["other"]["t"].status is TaskStatus.SUCCEEDED  # never waited


def test_a_job_faster_than_the_host_takes_the_hosts_pace() -> None:
    host = HostLimits(concurrency=4, min_interval_s=2.0)
    assert job_pace(None, host) is None
    assert job_pace(1.0, host) is None  # 1 s apart asked, the host's 2 s hold
    assert job_pace(0.25, host) == HostLimits(concurrency=4, min_interval_s=4.0)


@pytest.mark.parametrize("rps", [1e-9, 0.009, 0, -1, 101])
def test_per_host_rps_out_of_bounds_is_refused_naming_the_field(rps: float) -> None:
    with pytest.raises(ValidationError) as caught:
        JobRequest.model_validate({"url": "http://a.example/", "options": {"per_host_rps": rps}})
    assert caught.value.errors()[0]["loc"][-1] == "per_host_rps"


def test_a_huge_crawl_delay_is_capped() -> None:
    rules = RobotsRules.parse(b"User-agent: *\nCrawl-delay: 999999999\n")
    assert rules.crawl_delay("scrapejobs/0.1") == MAX_CRAWL_DELAY_S


def test_paused_hosts_leave_out_keys_that_are_not_hosts() -> None:
    later = NOW + timedelta(hours=1)
    paused = [
        PausedHost(job_pace_key("slow", HOST), later, "held"),
        PausedHost("tenant~acme", later, "held"),
        PausedHost(HOST, later, "held"),
    ]
    assert [p.host for p in merge_paused(paused, 10)] == [HOST]


async def test_a_slow_job_s_deferred_batch_waits_its_time_unpublished() -> None:
    """Deferred for its own pace (its next request of the host 100 s away), the batch is not
    published again at once, which would only have a delivery hold a push to wait: it waits,
    stored and not active, until its time; then (here: the worker stopping, which wakes what
    waits on it) it is published with its deferrals."""
    store, publisher = MemoryJobStore(), MemoryTaskPublisher()
    slow = await setup_job(
        store,
        {"url": "http://a.example/", "extract": FIELDS, "options": {"per_host_rps": 0.01}},
        urls=3,
        job_id="slow",
    )
    processor = build_processor(
        store, ScriptedFetcher(200), lambda: NOW, publisher=publisher, held=MemoryHeldBatches(store)
    )

    verdict = await processor.handle_push(push(batch=slow))

    assert verdict.ack and verdict.reason == "deferred"
    assert publisher.batches == []
    waiting = store.batches["slow"]["b"]
    assert waiting.wait_until is not None and waiting.wait_deferrals == 1
    assert timedelta(seconds=99) < waiting.wait_until - NOW <= timedelta(seconds=100)
    assert not waiting.active  # the reconcile of lost messages leaves it alone
    await processor.close()
    [(message, attributes)] = publisher.batches
    assert attributes[DEFERRALS] == "1"
    assert sorted(task.id for task in message.tasks) == ["t1", "t2"]
    assert store.batches["slow"]["b"].wait_until is None


async def test_a_wait_is_woken_at_its_time_and_a_short_one_is_not_stored() -> None:
    store, publisher = MemoryJobStore(), MemoryTaskPublisher()
    batch = await setup_job(store, urls=2)
    enqueuer = Enqueuer(store, publisher, lambda: NOW, NoOpTracer())
    waits = BatchWaits(MemoryHeldBatches(store), enqueuer, lambda: NOW, apart_s=0.05)

    assert await waits.defer(batch, 2, 0.01)  # shorter than waiting apart: at once
    assert len(publisher.batches) == 1 and store.batches["j"]["b"].wait_until is None
    assert await waits.defer(batch, 3, 0.1)
    assert len(publisher.batches) == 1 and waits.waiting == 1
    await asyncio.sleep(0.3)
    assert len(publisher.batches) == 2 and waits.waiting == 0
    assert publisher.batches[-1][1][DEFERRALS] == "3"
    assert store.batches["j"]["b"].wait_until is None


async def test_a_wait_the_store_cannot_keep_is_published_at_once() -> None:
    store, publisher = MemoryJobStore(), MemoryTaskPublisher()
    batch = await setup_job(store, urls=2)
    held = MemoryHeldBatches(store)
    enqueuer = Enqueuer(store, publisher, lambda: NOW, NoOpTracer())

    async def away(*_: object) -> bool:
        raise DependencyUnavailable("firestore", 5.0)

    held.wait = away  # type: ignore[method-assign]
    waits = BatchWaits(held, enqueuer, lambda: NOW)
    assert await waits.defer(batch, 1, 100.0)
    assert len(publisher.batches) == 1 and waits.waiting == 0


def test_a_batch_deferred_again_and_again_waits_longer_each_time() -> None:
    assert [backoff_s(n) for n in range(1, FREE_DEFERRALS + 1)] == [0.0] * FREE_DEFERRALS
    waits = [backoff_s(FREE_DEFERRALS + n) for n in range(1, 9)]
    assert waits[:4] == [1.0, 2.0, 4.0, 8.0] and waits[-1] == BACKOFF_CAP_S
    assert waits == sorted(waits)


async def test_a_short_wait_deferred_many_times_waits_unpublished() -> None:
    """A host busy deferral after deferral (a wait of 0.2 s each time): past the free ones the
    batch waits its backoff out of the way, stored, not published at once."""
    store, publisher = MemoryJobStore(), MemoryTaskPublisher()
    batch = await setup_job(store, urls=2)
    enqueuer = Enqueuer(store, publisher, lambda: NOW, NoOpTracer())
    waits = BatchWaits(MemoryHeldBatches(store), enqueuer, lambda: NOW, apart_s=1.5)

    assert await waits.defer(batch, FREE_DEFERRALS, 0.2)  # still free: at once
    assert len(publisher.batches) == 1 and waits.waiting == 0
    assert await waits.defer(batch, FREE_DEFERRALS + 2, 0.2)  # a backoff of 2 s: stored
    assert len(publisher.batches) == 1 and waits.waiting == 1
    assert store.batches["j"]["b"].wait_until == NOW + timedelta(seconds=2)
    await waits.close()
