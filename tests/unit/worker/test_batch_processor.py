"""The worker's batch logic over in-memory adapters and scripted fetchers."""

from __future__ import annotations

import asyncio
import base64
from dataclasses import replace
from datetime import UTC, datetime, timedelta

import pytest

from scrapejobs_shared.adapters.memory.held_batches import MemoryHeldBatches
from scrapejobs_shared.adapters.memory.host_gate import MemoryHostGate
from scrapejobs_shared.adapters.memory.job_store import MemoryJobStore
from scrapejobs_shared.adapters.memory.publisher import MemoryTaskPublisher
from scrapejobs_shared.domain.records import BatchItem, TaskRecord
from scrapejobs_shared.domain.statuses import JobStatus, TaskStatus
from scrapejobs_shared.messaging.topology import LANE_ATTRIBUTE
from scrapejobs_shared.politeness.admission import PolitenessPolicy
from scrapejobs_shared.ports.batch_store import BatchClaim
from scrapejobs_shared.ports.fetcher import (
    BlockedDestination,
    FetchRequest,
    FetchResponse,
    TransientFetchError,
)
from scrapejobs_worker.delivery.push_delivery import BatchPolicy
from scrapejobs_worker.tasks.task_runner import RunnerPolicy
from support.worker_fakes import (
    NOW,
    PerUrlFetcher,
    ScriptedFetcher,
    build_processor,
    push,
    setup_job,
)

FIELDS = {"h": {"css": "h1::text"}}
URL = "http://a.example/"


def job(**options: object) -> dict:
    return {"url": URL, "extract": FIELDS, "options": options}


def item(store: MemoryJobStore, task_id: str = "t") -> BatchItem:
    return next(i for i in store.batches["j"]["b"].items if i.task_id == task_id)


def result(store: MemoryJobStore, task_id: str = "t") -> TaskRecord:
    return store.results["j"][task_id]


@pytest.fixture
def store() -> MemoryJobStore:
    return MemoryJobStore()


async def test_success_records_result_and_completes_job(store) -> None:
    await setup_job(store)
    verdict = await build_processor(store, ScriptedFetcher(200), lambda: NOW).handle_push(push())
    assert verdict.ack
    task = result(store)
    assert task.status is TaskStatus.SUCCEEDED and task.data == {"h": "Hello"}
    assert task.attempts == 1 and task.http_status == 200 and task.fetched_at == NOW
    assert store.jobs["j"].status is JobStatus.COMPLETED


async def test_transient_failures_retry_then_succeed(store) -> None:
    await setup_job(store)
    fetcher = ScriptedFetcher(500, TransientFetchError("reset"), 200)
    processor = build_processor(store, fetcher, lambda: NOW)
    first, second, third = [await processor.handle_push(push()) for _ in range(3)]
    assert not first.ack
    assert not second.ack
    assert third.ack and result(store).attempts == 3 and result(store).error is None


async def test_an_unexpected_error_in_a_task_retries_it_instead_of_failing_the_batch(
    store,
) -> None:
    await setup_job(store)
    processor = build_processor(store, ScriptedFetcher(RuntimeError("boom"), 200), lambda: NOW)
    first = await processor.handle_push(push())
    assert not first.ack  # a nack: Pub/Sub redelivers
    assert item(store).error == "internal_error: RuntimeError" and item(store).attempts == 1
    assert (await processor.handle_push(push())).ack and result(
        store
    ).status is TaskStatus.SUCCEEDED


async def test_transient_failure_keeps_the_task_open_with_its_error(store) -> None:
    await setup_job(store)
    processor = build_processor(store, ScriptedFetcher(500), lambda: NOW)
    assert not (await processor.handle_push(push())).ack
    assert item(store).status is TaskStatus.RUNNING and item(store).error == "HTTP 500"
    assert item(store).attempts == 1 and "t" not in store.results["j"]


async def test_permanent_failures_are_recorded_and_acked(store) -> None:
    await setup_job(store)
    verdict = await build_processor(store, ScriptedFetcher(404), lambda: NOW).handle_push(push())
    assert verdict.ack and result(store).status is TaskStatus.FAILED
    assert result(store).error == "HTTP 404"


async def test_blocked_destination_fails_without_retry(store) -> None:
    await setup_job(store)
    fetcher = ScriptedFetcher(BlockedDestination("169.254.169.254 is link-local"))
    verdict = await build_processor(store, fetcher, lambda: NOW).handle_push(push())
    assert verdict.ack and result(store).error.startswith("blocked_destination")


async def test_blocked_robots_txt_is_a_blocked_destination_not_disallowed(store) -> None:
    await setup_job(store)

    class BlockedEverywhere(ScriptedFetcher):
        async def fetch(self, request):
            raise BlockedDestination("169.254.169.254 is link-local")

    verdict = await build_processor(store, BlockedEverywhere(200), lambda: NOW).handle_push(push())
    assert verdict.ack and result(store).error.startswith("blocked_destination")


async def test_max_attempts_option_gives_up(store) -> None:
    await setup_job(store, job(max_attempts=2))
    processor = build_processor(store, ScriptedFetcher(500), lambda: NOW)
    assert not (await processor.handle_push(push())).ack
    assert (await processor.handle_push(push())).ack
    task = result(store)
    assert task.status is TaskStatus.FAILED and task.attempts == 2
    assert task.error == "max_attempts: gave up after 2: HTTP 500"


async def test_still_failing_after_max_delivery_attempts_is_dead_lettered(store) -> None:
    await setup_job(store)
    processor = build_processor(
        store, ScriptedFetcher(500), lambda: NOW, runner=RunnerPolicy(max_delivery_attempts=3)
    )
    verdicts = [await processor.handle_push(push()) for _ in range(3)]
    assert [v.ack for v in verdicts] == [False, False, True]
    task = result(store)
    assert task.status is TaskStatus.DEAD_LETTERED and task.error == "HTTP 500"
    assert task.attempts == 3 and store.jobs["j"].status is JobStatus.COMPLETED


async def test_redelivery_after_success_is_a_no_op(store) -> None:
    await setup_job(store)
    fetcher = ScriptedFetcher(200)
    processor = build_processor(store, fetcher, lambda: NOW)
    await processor.handle_push(push())
    assert (await processor.handle_push(push())).ack
    assert (await processor.handle_dead_letter(push())).ack
    assert len(fetcher.calls) == 1 and result(store).status is TaskStatus.SUCCEEDED


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
    await store.claim_batch(
        BatchClaim("j", "b", NOW, NOW + timedelta(seconds=6))
    )  # a crashed delivery
    clock[0] = NOW + timedelta(seconds=7)
    assert (await processor.handle_push(push())).ack
    assert result(store).attempts == 2


async def test_cancelled_job_tasks_are_not_fetched(store) -> None:
    await setup_job(store, urls=3)
    await store.cancel_job("j", NOW)
    fetcher = ScriptedFetcher(200)
    batch = store.batches["j"]["b"]
    assert (await build_processor(store, fetcher, lambda: NOW).handle_push(push(batch=batch))).ack
    assert fetcher.calls == []
    assert {t.status for t in store.results["j"].values()} == {TaskStatus.CANCELLED}


async def _cancel_while_running(
    store: MemoryJobStore, fetcher: ScriptedFetcher, after_s: float, **policies: object
) -> list[TaskStatus]:
    """Run batch ``b`` of job ``j``, cancel the job ``after_s`` in, wait for the delivery to
    answer (ack); the statuses of its tasks' results."""
    processor = build_processor(store, fetcher, lambda: datetime.now(UTC), **policies)
    running = asyncio.create_task(processor.handle_push(push(batch=store.batches["j"]["b"])))
    await asyncio.sleep(after_s)
    await store.cancel_job("j", NOW)
    assert (await running).ack
    return [t.status for t in store.results["j"].values()]


async def test_cancel_during_a_batch_stops_its_unstarted_tasks(store) -> None:
    await setup_job(store, urls=12)
    fetcher = ScriptedFetcher(200, delay_s=0.3)
    batch = BatchPolicy(concurrency=2, flush_interval_s=0.05, lease_s=6)
    statuses = await _cancel_while_running(store, fetcher, 0.1, batch=batch)
    assert statuses.count(TaskStatus.CANCELLED) >= 6 and len(fetcher.calls) <= 6
    assert len(statuses) == 12


async def test_a_cancel_is_seen_within_the_flush_interval_before_any_task_finishes(
    store,
) -> None:
    """Slow pages: the batch's first two fetches are still running when the job is cancelled;
    the recorder's next commit (within the flush interval, results or not) tells the lanes, so
    none starts another fetch."""
    await setup_job(store, urls=8)
    fetcher = ScriptedFetcher(200, delay_s=1.0)
    batch = BatchPolicy(concurrency=2, flush_interval_s=0.1, lease_s=6)
    statuses = await _cancel_while_running(store, fetcher, 0.15, batch=batch)
    assert len(fetcher.calls) == 2 and statuses.count(TaskStatus.CANCELLED) == 6


async def test_a_task_that_waited_for_the_host_is_not_fetched_after_a_cancel(store) -> None:
    """8 lanes, 2 host slots: 6 lanes wait for a slot. Once the cancel has reached the batch,
    a lane that gets a slot gives it back instead of fetching."""
    await setup_job(store, job(per_host_concurrency=2), urls=8)
    fetcher = ScriptedFetcher(200, delay_s=1.0)
    statuses = await _cancel_while_running(
        store,
        fetcher,
        0.15,
        politeness=PolitenessPolicy(max_wait_s=10.0),  # lanes wait for the host
        batch=BatchPolicy(concurrency=8, flush_interval_s=0.1, lease_s=6),
    )
    assert len(fetcher.calls) == 2 and statuses.count(TaskStatus.CANCELLED) == 6


async def test_a_fetch_the_deadline_would_cut_short_of_the_batch_pace_is_not_started(
    store,
) -> None:
    """Pages take 0.6 s; the delivery has 3.5 s, a fetch gets what is left minus 1 s. The
    fourth fetch would get 0.7 s, under 1.5 x the batch's longest fetch: it and the rest are
    deferred rather than started and cut (and fetched again)."""
    batch = await setup_job(store, urls=8)
    fetcher = ScriptedFetcher(200, delay_s=0.6)
    processor = build_processor(
        store,
        fetcher,
        lambda: datetime.now(UTC),
        runner=RunnerPolicy(fetch_timeout_s=5, lease_margin_s=1, min_fetch_s=0.1),
        batch=BatchPolicy(ack_deadline_s=4.0, deadline_margin_s=0.5, concurrency=1, lease_s=6),
    )
    verdict = await processor.handle_push(push(batch=batch))
    assert verdict.ack and verdict.reason == "deferred"
    assert len(fetcher.calls) == 3


async def test_dead_letter_keeps_last_error(store) -> None:
    await setup_job(store)
    spent = BatchPolicy(lease_s=6, max_delivery_attempts=1)  # one attempt spends the task's
    processor = build_processor(store, ScriptedFetcher(500), lambda: NOW, batch=spent)
    await processor.handle_push(push())
    assert (await processor.handle_dead_letter(push())).ack
    task = result(store)
    assert task.status is TaskStatus.DEAD_LETTERED and task.error == "HTTP 500"
    assert store.jobs["j"].status is JobStatus.COMPLETED


async def test_dead_letter_waits_for_a_running_delivery(store) -> None:
    await setup_job(store)
    await store.claim_batch(BatchClaim("j", "b", NOW, NOW + timedelta(seconds=30)))
    processor = build_processor(store, ScriptedFetcher(200), lambda: NOW)
    assert not (await processor.handle_dead_letter(push())).ack
    assert item(store).status is TaskStatus.RUNNING


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
    assert fetcher.calls == [] and result(store).status is TaskStatus.FAILED
    assert result(store).error == "robots_disallowed"


async def test_robots_can_be_ignored_per_job(store) -> None:
    await setup_job(store, job(respect_robots=False))
    fetcher = ScriptedFetcher(200, robots=(200, b"User-agent: *\nDisallow: /"))
    assert (await build_processor(store, fetcher, lambda: NOW).handle_push(push())).ack
    assert result(store).status is TaskStatus.SUCCEEDED


async def test_retry_after_throttle_defers_without_spending_an_attempt(store) -> None:
    await setup_job(store)
    gate, publisher = MemoryHostGate(), MemoryTaskPublisher()
    fetcher = ScriptedFetcher((429, {"retry-after": "30"}), 200)
    processor = build_processor(store, fetcher, lambda: NOW, gate=gate, publisher=publisher)

    verdict = await processor.handle_push(push())

    assert verdict.ack and verdict.reason == "deferred"
    assert item(store).attempts == 0 and item(store).status is TaskStatus.RUNNING
    assert item(store).error.startswith("throttled: HTTP 429")
    [(message, attributes)] = publisher.batches
    assert [t.id for t in message.tasks] == ["t"] and attributes["deferrals"] == "1"
    assert gate.next_at["http~a.example~80"] == NOW + timedelta(seconds=30)
    again = await processor.handle_push(push(deferrals="1"))
    assert again.ack and again.reason == "deferred" and item(store).error == "host busy (rate)"
    assert len(fetcher.calls) == 1  # the host is not asked again before Retry-After


async def test_503_without_retry_after_is_an_ordinary_failure(store) -> None:
    await setup_job(store)
    processor = build_processor(store, ScriptedFetcher(503), lambda: NOW)
    verdict = await processor.handle_push(push())
    assert not verdict.ack and item(store).attempts == 1


async def test_busy_host_defers_the_task_untouched(store) -> None:
    await setup_job(store, job(per_host_concurrency=1))
    gate, publisher = MemoryHostGate(), MemoryTaskPublisher()
    gate.occupy("http~a.example~80", 0, NOW + timedelta(seconds=30))
    processor = build_processor(
        store, ScriptedFetcher(200), lambda: NOW, gate=gate, publisher=publisher
    )
    verdict = await processor.handle_push(push())
    assert verdict.ack and verdict.reason == "deferred" and "concurrency" in item(store).error
    assert item(store).attempts == 0 and len(publisher.batches) == 1


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
        runner=RunnerPolicy(max_delivery_attempts=10),
    )
    for _ in range(policy.breaker.failure_threshold):
        assert not (await processor.handle_push(push())).ack
    paused = await processor.handle_push(push())
    assert paused.ack and "circuit_open" in item(store).error
    assert item(store).attempts == policy.breaker.failure_threshold


async def test_crawl_pages_become_one_batch_of_tasks_once(store) -> None:
    body = {"crawl": {"start_url": URL, "max_depth": 1}, "extract": FIELDS}
    await setup_job(store, body)
    publisher = MemoryTaskPublisher()
    processor = build_processor(store, ScriptedFetcher(200), lambda: NOW, publisher=publisher)
    assert (await processor.handle_push(push())).ack
    children = [t for t in store.results["j"].values() if t.id != "t"]
    assert [c.url for c in children] == ["http://a.example/next"] and children[0].depth == 1
    [(message, _)] = publisher.batches
    assert [t.url for t in message.tasks] == ["http://a.example/next"]
    assert result(store).data == {"h": "Hello"}  # links were not asked for
    assert store.jobs["j"].status is JobStatus.RUNNING


async def test_a_crawl_s_found_batches_wait_held_beyond_their_host_s_window(store) -> None:
    """Each of three pages finds a batch of its own host: the finder's window (itself and one
    more) publishes one and holds two; its end releases one, and each that ends one more."""
    body = {"crawl": {"start_url": URL, "max_depth": 1}, "extract": FIELDS}
    await setup_job(store, body, urls=3)

    class Linking(ScriptedFetcher):
        async def fetch(self, request: FetchRequest) -> FetchResponse:
            response = await super().fetch(request)
            n = request.url.rpartition("=")[2] if "?n=" in request.url else "0"
            return replace(response, body=b'<h1>Hi</h1><a href="/next-%s">next</a>' % n.encode())

    publisher = MemoryTaskPublisher()
    processor = build_processor(
        store, Linking(200), lambda: NOW, publisher=publisher, held=MemoryHeldBatches(store)
    )
    assert (await processor.handle_push(push())).ack
    found = [b for b in store.batches["j"].values() if b.id != "b"]
    assert len(found) == 3 and sum(b.held for b in found) == 1  # the finder's end released one
    assert len(publisher.batches) == 2
    first, _ = publisher.batches[0]
    assert (await processor.handle_push(push(first.encode()))).ack
    assert not any(b.held for b in store.batches["j"].values()) and len(publisher.batches) == 3
    for message, _ in publisher.batches[1:]:
        assert (await processor.handle_push(push(message.encode()))).ack
    assert store.jobs["j"].status is JobStatus.COMPLETED


async def test_a_crawl_s_documents_take_the_documents_lane_and_its_pages_the_job_s(store) -> None:
    body = {"crawl": {"start_url": URL, "max_depth": 1}, "priority": "high", "extract": FIELDS}
    await setup_job(store, body)  # its first batch in the normal lane: children take the job's

    class Linking(ScriptedFetcher):
        async def fetch(self, request: FetchRequest) -> FetchResponse:
            response = await super().fetch(request)
            page = b'<h1>Hello</h1><a href="/report.PDF">report</a><a href="/next">next</a>'
            return replace(response, body=page)

    publisher = MemoryTaskPublisher()
    processor = build_processor(store, Linking(200), lambda: NOW, publisher=publisher)
    assert (await processor.handle_push(push())).ack
    published = {(m.tasks[0].url, a[LANE_ATTRIBUTE]) for m, a in publisher.batches}
    assert published == {
        ("http://a.example/next", "high"),
        ("http://a.example/report.PDF", "documents"),
    }


async def test_mixed_batch_settles_each_task_on_its_own(store) -> None:
    batch = await setup_job(store, urls=4)
    fetcher = PerUrlFetcher(
        {
            f"{URL}?n=1": [404],
            f"{URL}?n=2": [500, 200],
            f"{URL}?n=3": [BlockedDestination("10.0.0.1 is private")],
        }
    )
    processor = build_processor(store, fetcher, lambda: NOW)

    first = await processor.handle_push(push(batch=batch))

    assert not first.ack  # one task failed transiently: the batch comes again
    assert result(store, "t").status is TaskStatus.SUCCEEDED
    assert result(store, "t1").error == "HTTP 404"
    assert result(store, "t3").error.startswith("blocked_destination")
    assert "t2" not in store.results["j"] and item(store, "t2").error == "HTTP 500"
    calls = len(fetcher.calls)

    second = await processor.handle_push(push(batch=batch))

    assert second.ack and len(fetcher.calls) == calls + 1  # only the open task ran again
    assert result(store, "t2").status is TaskStatus.SUCCEEDED
    assert result(store, "t2").attempts == 2 and result(store, "t").attempts == 1
    counts = await store.count_tasks("j")
    assert counts[TaskStatus.SUCCEEDED] == 2 and counts[TaskStatus.FAILED] == 2
    assert store.jobs["j"].status is JobStatus.COMPLETED


async def test_batch_concurrency_is_bounded(store) -> None:
    batch = await setup_job(store, job(per_host_concurrency=64), urls=20)
    fetcher = PerUrlFetcher({}, delay_s=0.05)
    processor = build_processor(
        store, fetcher, lambda: datetime.now(UTC), batch=BatchPolicy(concurrency=4, lease_s=6)
    )
    assert (await processor.handle_push(push(batch=batch))).ack
    assert fetcher.max_in_flight == 4 and len(store.results["j"]) == 20


async def test_per_host_concurrency_holds_inside_one_worker(store) -> None:
    batch = await setup_job(store, job(per_host_concurrency=2), urls=10)
    fetcher = PerUrlFetcher({}, delay_s=0.05)
    policy = PolitenessPolicy(max_wait_s=5.0)
    processor = build_processor(store, fetcher, lambda: datetime.now(UTC), politeness=policy)
    assert (await processor.handle_push(push(batch=batch))).ack
    assert fetcher.max_in_flight == 2 and len(store.results["j"]) == 10


async def test_a_batch_too_long_for_the_ack_deadline_defers_what_cannot_finish(store) -> None:
    batch = await setup_job(store, job(per_host_concurrency=64), urls=8)
    publisher = MemoryTaskPublisher()
    fetcher = PerUrlFetcher({}, delay_s=1.0)
    processor = build_processor(
        store,
        fetcher,
        lambda: datetime.now(UTC),
        publisher=publisher,
        runner=RunnerPolicy(fetch_timeout_s=5, lease_margin_s=1, min_fetch_s=1.0),
        batch=BatchPolicy(ack_deadline_s=4.5, deadline_margin_s=0.5, concurrency=2, lease_s=6),
    )
    started = asyncio.get_running_loop().time()
    verdict = await processor.handle_push(push(batch=batch))
    elapsed = asyncio.get_running_loop().time() - started

    assert elapsed < 4.5, "the delivery overran its ack deadline"
    assert verdict.ack and verdict.reason == "deferred"
    done = len(store.results["j"])
    assert 2 <= done < 8
    [(message, attributes)] = publisher.batches
    assert len(message.tasks) == 8 - done and attributes["deferrals"] == "1"
    assert all(item(store, t.id).attempts == 0 for t in message.tasks)  # refunded


class SlowReads(MemoryJobStore):
    """The memory store with a round trip's pause on the job read and the claim, recording
    when each starts and ends."""

    def __init__(self) -> None:
        super().__init__()
        self.events: list[str] = []

    async def get_job(self, job_id: str):  # type: ignore[no-untyped-def]
        self.events.append("job read starts")
        await asyncio.sleep(0.02)
        self.events.append("job read ends")
        return await super().get_job(job_id)

    async def claim_batch(self, *args, **kwargs):  # type: ignore[no-untyped-def]
        self.events.append("claim starts")
        await asyncio.sleep(0.02)
        self.events.append("claim ends")
        return await super().claim_batch(*args, **kwargs)


async def test_a_jobs_first_batch_reads_the_spec_and_claims_at_once() -> None:
    """A one-URL job pays one round trip before its fetch, not two in a row."""
    store = SlowReads()
    await setup_job(store)
    store.events.clear()
    verdict = await build_processor(store, ScriptedFetcher(200), lambda: NOW).handle_push(push())
    assert verdict.ack and result(store).status is TaskStatus.SUCCEEDED
    first_end = min(store.events.index("job read ends"), store.events.index("claim ends"))
    assert store.events.index("claim starts") < first_end
    assert store.events.index("job read starts") < first_end
