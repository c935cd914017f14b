"""Webhooks over the memory adapters: one event per end of a job, even when two completions
race; signed so the standardwebhooks library verifies it; retried with the same webhook-id;
recorded on the job; given up on after the attempts or at once for a refused destination."""

from __future__ import annotations

import asyncio
import base64
import json
import os
from datetime import UTC, datetime, timedelta

import pytest
from standardwebhooks.webhooks import Webhook

from scrapejobs_shared.adapters.memory.job_store import MemoryJobStore
from scrapejobs_shared.adapters.memory.webhooks import MemoryWebhookLog, MemoryWebhookOutbox
from scrapejobs_shared.delivery.completion import complete_if_done
from scrapejobs_shared.delivery.job_events import JobEvents
from scrapejobs_shared.domain.batch_transitions import FinishTask
from scrapejobs_shared.domain.jobspec import JobSpec
from scrapejobs_shared.domain.records import BatchItem, BatchRecord, JobRecord, TaskOutcome
from scrapejobs_shared.domain.statuses import JobStatus, TaskStatus
from scrapejobs_shared.domain.webhook_spec import WebhookSpec
from scrapejobs_shared.messaging.task_message import PushedMessage
from scrapejobs_shared.ports.batch_store import BatchClaim, Claimed
from scrapejobs_shared.ports.fetcher import BlockedDestination
from scrapejobs_worker.lanes.webhook_sender import WebhookPolicy, WebhookSender
from support.worker_fakes import ScriptedFetcher

NOW = datetime(2026, 11, 23, 10, tzinfo=UTC)
SECRET = "whsec_" + base64.b64encode(os.urandom(24)).decode()


def clock() -> datetime:
    return datetime.now(UTC)  # a receiver refuses a signature timestamped 5 minutes away


async def ended_job(
    store: MemoryJobStore, outcomes: list[TaskStatus], events: list[str] | None = None
) -> str:
    hook = WebhookSpec(url="http://hooks.example/in", secret=SECRET, headers={"X-Team": "a"})
    if events is not None:
        hook = hook.model_copy(update={"events": events})
    job = JobRecord(
        id="j1",
        status=JobStatus.RUNNING,
        spec=JobSpec(webhook=hook),
        created_at=NOW,
        updated_at=NOW,
        expire_at=NOW + timedelta(days=1),
        total=len(outcomes),
    )
    batches = [
        BatchRecord("j1", f"b{i}", (BatchItem(f"t{i}", f"http://a.example/{i}"),), NOW, NOW)
        for i in range(len(outcomes))
    ]
    await store.create_job(job, batches)
    for i, status in enumerate(outcomes):
        claim = await store.claim_batch(BatchClaim("j1", f"b{i}", NOW, NOW + timedelta(seconds=30)))
        assert isinstance(claim, Claimed)
        await store.settle(claim.handle, [FinishTask(f"t{i}", TaskOutcome(status))], NOW)
    return "j1"


async def test_racing_completions_queue_exactly_one_event() -> None:
    store, outbox = MemoryJobStore(), MemoryWebhookOutbox()
    events = JobEvents(store, outbox)
    await ended_job(store, [TaskStatus.SUCCEEDED, TaskStatus.FAILED])
    done = await asyncio.gather(*(complete_if_done(store, "j1", clock, events) for _ in range(5)))
    assert sorted(done) == [False] * 4 + [True]
    [event] = outbox.events
    assert event.type == "job.completed" and event.data["counts"]["failed"] == 1
    assert event.data["total"] == 2 and event.id.startswith("evt_")


@pytest.mark.parametrize(
    ("outcomes", "expected"),
    [([TaskStatus.FAILED, TaskStatus.DEAD_LETTERED], "job.failed"), ([], "job.completed")],
)
async def test_a_job_whose_every_task_failed_is_job_failed(outcomes, expected) -> None:
    store, outbox = MemoryJobStore(), MemoryWebhookOutbox()
    await ended_job(store, outcomes)
    await complete_if_done(store, "j1", clock, JobEvents(store, outbox))
    assert [e.type for e in outbox.events] == [expected]


async def test_only_the_events_the_webhook_asks_for_are_queued() -> None:
    store, outbox = MemoryJobStore(), MemoryWebhookOutbox()
    await ended_job(store, [TaskStatus.SUCCEEDED], events=["job.cancelled"])
    await complete_if_done(store, "j1", clock, JobEvents(store, outbox))
    assert outbox.events == []


def pushed(event) -> PushedMessage:
    return PushedMessage("m1", event.to_message(), {}, "projects/p/subscriptions/s", None)


async def sender_for(steps, max_attempts: int = 3):
    store, outbox, log = MemoryJobStore(), MemoryWebhookOutbox(), MemoryWebhookLog()
    await ended_job(store, [TaskStatus.SUCCEEDED])
    await complete_if_done(store, "j1", clock, JobEvents(store, outbox))
    fetcher = ScriptedFetcher(*steps)
    sender = WebhookSender(store, log, fetcher, clock, [], WebhookPolicy(max_attempts=max_attempts))
    return sender, fetcher, log, outbox.events[0]


async def test_a_delivery_is_signed_retried_with_the_same_id_and_recorded() -> None:
    sender, fetcher, log, event = await sender_for([500, 204])

    first = await sender.handle(pushed(event))
    second = await sender.handle(pushed(event))
    third = await sender.handle(pushed(event))  # a redelivery after success: nothing sent

    assert not first.ack and second.ack and third.ack
    assert len(fetcher.calls) == 2
    ids = {call.headers["webhook-id"] for call in fetcher.calls}
    assert ids == {event.id}
    for call in fetcher.calls:
        assert call.body is not None and call.headers["X-Team"] == "a"
        verified = Webhook(SECRET).verify(call.body, dict(call.headers))  # raises if not
        assert verified["type"] == "job.completed" and verified["data"]["job_id"] == "j1"
    [delivery] = await log.list("j1", 10)
    assert delivery.state == "delivered" and delivery.attempts == 2
    assert delivery.last_status == 204 and delivery.delivered_at is not None


async def test_an_event_is_given_up_after_its_attempts() -> None:
    sender, _, log, event = await sender_for([503], max_attempts=2)
    assert not (await sender.handle(pushed(event))).ack
    assert (await sender.handle(pushed(event))).ack
    [delivery] = await log.list("j1", 10)
    assert delivery.state == "failed" and delivery.last_error == "HTTP 503"


async def test_a_refused_destination_fails_at_once() -> None:
    blocked = BlockedDestination("address 169.254.169.254 is refused")
    sender, _, log, event = await sender_for([blocked])
    assert (await sender.handle(pushed(event))).ack
    [delivery] = await log.list("j1", 10)
    assert delivery.state == "failed" and delivery.last_error.startswith("blocked_destination")


async def test_a_malformed_event_is_recorded_and_acked() -> None:
    sender, _, _, _ = await sender_for([204])
    bad = PushedMessage("m2", b"{", {}, "s", None)
    assert (await sender.handle(bad)).ack


def test_the_body_is_the_event_json() -> None:
    from scrapejobs_shared.domain.webhook_events import WebhookEvent

    event = WebhookEvent("evt_1", "job.cancelled", "j", NOW, {"job_id": "j"})
    assert json.loads(event.body()) == {
        "type": "job.cancelled",
        "timestamp": NOW.isoformat(),
        "data": {"job_id": "j"},
    }
    assert WebhookEvent.from_message(event.to_message()) == event


async def test_an_event_lost_before_it_was_queued_is_queued_again() -> None:
    store, outbox, log = MemoryJobStore(), MemoryWebhookOutbox(), MemoryWebhookLog()
    await ended_job(store, [TaskStatus.SUCCEEDED])
    await complete_if_done(store, "j1", clock)  # ended, but its event never queued (a crash)
    events = JobEvents(store, outbox)
    now = clock()
    [job] = await store.finished_between(now - timedelta(hours=1), now + timedelta(hours=1), 10)

    assert await events.announce_if_lost(job, log)
    [event] = outbox.events
    sender = WebhookSender(store, log, ScriptedFetcher(204), clock, [], WebhookPolicy())
    assert (await sender.handle(pushed(event))).ack
    assert not await events.announce_if_lost(job, log)  # attempted: never again
    assert len(outbox.events) == 1


class CountingReads(MemoryJobStore):
    def __init__(self) -> None:
        super().__init__()
        self.job_reads = 0

    async def get_job(self, job_id: str):  # type: ignore[no-untyped-def]
        self.job_reads += 1
        return await super().get_job(job_id)


async def test_a_completion_given_the_spec_reads_the_job_again_only_for_a_webhook() -> None:
    store, outbox = CountingReads(), MemoryWebhookOutbox()
    await ended_job(store, [TaskStatus.SUCCEEDED])
    job = await store.get_job("j1")
    assert job is not None
    store.job_reads = 0
    silent = job.spec.model_copy(update={"webhook": None})
    assert await complete_if_done(store, "j1", clock, JobEvents(store, outbox), spec=silent)
    assert store.job_reads == 0 and outbox.events == []  # no webhook: nothing to announce

    store, outbox = CountingReads(), MemoryWebhookOutbox()
    await ended_job(store, [TaskStatus.SUCCEEDED])
    job = await store.get_job("j1")
    assert job is not None
    assert await complete_if_done(store, "j1", clock, JobEvents(store, outbox), spec=job.spec)
    assert [e.type for e in outbox.events] == ["job.completed"]
