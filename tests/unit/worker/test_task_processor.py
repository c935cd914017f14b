"""The worker's task logic over in-memory adapters and a scripted fetcher."""

from __future__ import annotations

import asyncio
import base64
from datetime import UTC, datetime, timedelta

import pytest

from scrapejobs_shared.adapters.memory.host_gate import MemoryHostGate
from scrapejobs_shared.adapters.memory.job_store import MemoryJobStore
from scrapejobs_shared.adapters.memory.publisher import MemoryTaskPublisher
from scrapejobs_shared.domain.statuses import JobStatus, TaskStatus
from scrapejobs_worker.fetch_port import BlockedDestination, TransientFetchError
from scrapejobs_worker.politeness import PolitenessPolicy
from support.worker_fakes import NOW, ScriptedFetcher, build_processor, push, setup_job

FIELDS = {"h": {"css": "h1::text"}}


def job(**options: object) -> dict:
    return {"url": "http://a.example/", "extract": FIELDS, "options": options}


@pytest.fixture
def store() -> MemoryJobStore:
    return MemoryJobStore()


async def test_success_records_result_and_completes_job(store) -> None:
    await setup_job(store)
    verdict = await build_processor(store, ScriptedFetcher(200), lambda: NOW).handle_push(push())
    assert verdict.ack
    task = store.tasks["j"]["t"]
    assert task.status is TaskStatus.SUCCEEDED and task.data == {"h": "Hello"}
    assert task.attempts == 1 and task.http_status == 200 and task.fetched_at == NOW
    assert store.jobs["j"].status is JobStatus.COMPLETED


async def test_transient_failures_retry_then_succeed(store) -> None:
    await setup_job(store)
    fetcher = ScriptedFetcher(500, TransientFetchError("reset"), 200)
    processor = build_processor(store, fetcher, lambda: NOW)
    first, second, third = [await processor.handle_push(push()) for _ in range(3)]
    assert not first.ack and first.reason == "HTTP 500"
    assert not second.ack and "network_error" in second.reason
    assert third.ack and store.tasks["j"]["t"].attempts == 3
    assert store.tasks["j"]["t"].error is None


async def test_permanent_failures_are_recorded_and_acked(store) -> None:
    await setup_job(store)
    verdict = await build_processor(store, ScriptedFetcher(404), lambda: NOW).handle_push(push())
    task = store.tasks["j"]["t"]
    assert verdict.ack and task.status is TaskStatus.FAILED and task.error == "HTTP 404"


async def test_blocked_destination_fails_without_retry(store) -> None:
    await setup_job(store)
    fetcher = ScriptedFetcher(BlockedDestination("169.254.169.254 is link-local"))
    verdict = await build_processor(store, fetcher, lambda: NOW).handle_push(push())
    assert verdict.ack
    assert store.tasks["j"]["t"].error.startswith("blocked_destination")


async def test_max_attempts_option_gives_up(store) -> None:
    await setup_job(store, job(max_attempts=2))
    processor = build_processor(store, ScriptedFetcher(500), lambda: NOW)
    assert not (await processor.handle_push(push())).ack
    assert (await processor.handle_push(push())).ack
    task = store.tasks["j"]["t"]
    assert task.status is TaskStatus.FAILED and task.attempts == 2
    assert task.error == "max_attempts: gave up after 2: HTTP 500"


async def test_redelivery_after_success_is_a_no_op(store) -> None:
    await setup_job(store)
    fetcher = ScriptedFetcher(200)
    processor = build_processor(store, fetcher, lambda: NOW)
    await processor.handle_push(push())
    assert (await processor.handle_push(push())).ack
    assert (await processor.handle_dead_letter(push())).ack
    assert len(fetcher.calls) == 1 and store.tasks["j"]["t"].status is TaskStatus.SUCCEEDED


async def test_concurrent_duplicate_waits_for_the_owner(store) -> None:
    await setup_job(store)
    fetcher = ScriptedFetcher(200, delay_s=0.2)
    policy = PolitenessPolicy(max_wait_s=5.0)
    processor = build_processor(store, fetcher, lambda: datetime.now(UTC), politeness=policy)
    verdicts = await asyncio.gather(processor.handle_push(push()), processor.handle_push(push()))
    assert all(v.ack for v in verdicts) and len(fetcher.calls) == 1


async def test_expired_lease_is_taken_over(store) -> None:
    await setup_job(store)
    clock = [NOW]
    processor = build_processor(store, ScriptedFetcher(200), lambda: clock[0])
    await store.claim_task("j", "t", NOW, NOW + timedelta(seconds=6))  # a crashed delivery
    clock[0] = NOW + timedelta(seconds=7)
    assert (await processor.handle_push(push())).ack
    assert store.tasks["j"]["t"].attempts == 2


async def test_cancelled_job_tasks_are_not_fetched(store) -> None:
    await setup_job(store)
    await store.set_job_status("j", JobStatus.CANCELLED, NOW)
    fetcher = ScriptedFetcher(200)
    assert (await build_processor(store, fetcher, lambda: NOW).handle_push(push())).ack
    assert fetcher.calls == [] and store.tasks["j"]["t"].status is TaskStatus.CANCELLED


async def test_dead_letter_keeps_last_error(store) -> None:
    await setup_job(store)
    processor = build_processor(store, ScriptedFetcher(500), lambda: NOW)
    await processor.handle_push(push())
    assert (await processor.handle_dead_letter(push())).ack
    task = store.tasks["j"]["t"]
    assert task.status is TaskStatus.DEAD_LETTERED and task.error == "HTTP 500"
    assert store.jobs["j"].status is JobStatus.COMPLETED


@pytest.mark.parametrize("payload", [b"{}", b"garbage", base64.b64encode(b"x")])
async def test_malformed_payload_is_recorded_and_acked(store, payload) -> None:
    processor = build_processor(store, ScriptedFetcher(200), lambda: NOW)
    assert (await processor.handle_push(push(payload))).ack and len(store.rejected) == 1


async def test_unknown_job_is_acked(store) -> None:
    verdict = await build_processor(store, ScriptedFetcher(200), lambda: NOW).handle_push(push())
    assert verdict.ack and verdict.reason == "unknown job"


async def test_robots_disallowed_page_fails_without_fetching(store) -> None:
    await setup_job(store)
    fetcher = ScriptedFetcher(200, robots=(200, b"User-agent: *\nDisallow: /"))
    assert (await build_processor(store, fetcher, lambda: NOW).handle_push(push())).ack
    task = store.tasks["j"]["t"]
    assert fetcher.calls == [] and task.status is TaskStatus.FAILED
    assert task.error == "robots_disallowed"


async def test_robots_can_be_ignored_per_job(store) -> None:
    await setup_job(store, job(respect_robots=False))
    fetcher = ScriptedFetcher(200, robots=(200, b"User-agent: *\nDisallow: /"))
    assert (await build_processor(store, fetcher, lambda: NOW).handle_push(push())).ack
    assert store.tasks["j"]["t"].status is TaskStatus.SUCCEEDED


async def test_retry_after_throttle_defers_without_spending_an_attempt(store) -> None:
    await setup_job(store)
    gate, publisher = MemoryHostGate(), MemoryTaskPublisher()
    fetcher = ScriptedFetcher((429, {"retry-after": "30"}), 200)
    processor = build_processor(store, fetcher, lambda: NOW, gate=gate, publisher=publisher)

    verdict = await processor.handle_push(push())

    assert verdict.ack and verdict.reason.startswith("deferred: throttled: HTTP 429")
    task = store.tasks["j"]["t"]
    assert task.attempts == 0 and task.status is TaskStatus.RUNNING
    [(message, attributes)] = publisher.published
    assert message.task_id == "t" and attributes["deferrals"] == "1"
    assert gate.next_at["http~a.example~80"] == NOW + timedelta(seconds=30)
    again = await processor.handle_push(push(deferrals="1"))
    assert again.ack and again.reason.startswith("deferred: host busy (rate)")
    assert len(fetcher.calls) == 1  # the host is not asked again before Retry-After


async def test_503_without_retry_after_is_an_ordinary_failure(store) -> None:
    await setup_job(store)
    processor = build_processor(store, ScriptedFetcher(503), lambda: NOW)
    verdict = await processor.handle_push(push())
    assert not verdict.ack and store.tasks["j"]["t"].attempts == 1


async def test_busy_host_defers_the_task_untouched(store) -> None:
    await setup_job(store, job(per_host_concurrency=1))
    gate, publisher = MemoryHostGate(), MemoryTaskPublisher()
    gate.slots[("http~a.example~80", 0)] = (NOW + timedelta(seconds=30), -1)
    processor = build_processor(
        store, ScriptedFetcher(200), lambda: NOW, gate=gate, publisher=publisher
    )
    verdict = await processor.handle_push(push())
    assert verdict.ack and "concurrency" in verdict.reason
    assert store.tasks["j"]["t"].status is TaskStatus.QUEUED and len(publisher.published) == 1


async def test_breaker_opens_after_consecutive_host_failures(store) -> None:
    await setup_job(store)
    gate = MemoryHostGate()
    policy = PolitenessPolicy(max_wait_s=0.0)
    processor = build_processor(
        store,
        ScriptedFetcher(TransientFetchError("refused")),
        lambda: NOW,
        gate=gate,
        politeness=policy,
    )
    for _ in range(policy.breaker.failure_threshold):
        assert not (await processor.handle_push(push())).ack
    paused = await processor.handle_push(push())
    assert paused.ack and "circuit_open" in paused.reason
    assert store.tasks["j"]["t"].attempts == policy.breaker.failure_threshold


async def test_crawl_pages_become_tasks_once(store) -> None:
    body = {"crawl": {"start_url": "http://a.example/", "max_depth": 1}, "extract": FIELDS}
    await setup_job(store, body)
    publisher = MemoryTaskPublisher()
    processor = build_processor(store, ScriptedFetcher(200), lambda: NOW, publisher=publisher)
    assert (await processor.handle_push(push())).ack
    children = [t for t in store.tasks["j"].values() if t.id != "t"]
    assert [c.url for c in children] == ["http://a.example/next"] and children[0].depth == 1
    assert [m.url for m, _ in publisher.published] == ["http://a.example/next"]
    assert store.tasks["j"]["t"].data == {"h": "Hello"}  # links were not asked for
    assert store.jobs["j"].status is JobStatus.RUNNING
