"""A job's start and each page's end announced to its webhook, over the memory adapters: a page
event is made from the stored task when delivered (nothing for a page not finished or
cancelled); the Firecrawl shape carries Firecrawl's body, its webhookId the same on a retry,
and an X-Firecrawl-Signature any Firecrawl receiver verifies with the webhook secret."""

from __future__ import annotations

import hashlib
import hmac
import json
import uuid
from datetime import UTC, datetime, timedelta
from typing import Any

from scrapejobs_shared.adapters.memory.job_store import MemoryJobStore
from scrapejobs_shared.adapters.memory.webhooks import MemoryWebhookLog, MemoryWebhookOutbox
from scrapejobs_shared.delivery.completion import complete_if_done
from scrapejobs_shared.delivery.job_events import JobEvents
from scrapejobs_shared.domain.batch_transitions import FinishTask
from scrapejobs_shared.domain.crawl_spec import CrawlSpec
from scrapejobs_shared.domain.jobspec import JobSpec
from scrapejobs_shared.domain.records import BatchItem, BatchRecord, JobRecord, TaskOutcome
from scrapejobs_shared.domain.statuses import JobStatus, TaskStatus
from scrapejobs_shared.domain.webhook_events import WebhookEvent
from scrapejobs_shared.domain.webhook_spec import WEBHOOK_EVENTS, WebhookSpec
from scrapejobs_shared.messaging.task_message import PushedMessage
from scrapejobs_shared.ports.batch_store import BatchClaim, Claimed
from scrapejobs_worker.lanes.webhook_sender import WebhookPolicy, WebhookSender
from support.worker_fakes import ScriptedFetcher

NOW = datetime(2026, 11, 26, 10, tzinfo=UTC)
KEY = "whsec_" + "A" * 32  # the deployment's key: Firecrawl's webhooks carry no secret
PAGE = {"markdown": "# Hello", "metadata": {"title": "Hello", "url": "http://a.example/0"}}


def clock() -> datetime:
    return datetime.now(UTC)


async def job_of(store: MemoryJobStore, hook: WebhookSpec, crawl: bool = False) -> JobRecord:
    spec = JobSpec(webhook=hook, crawl=CrawlSpec(start_url="http://a.example/") if crawl else None)
    job = JobRecord(
        id="j1",
        status=JobStatus.RUNNING,
        spec=spec,
        created_at=NOW,
        updated_at=NOW,
        expire_at=NOW + timedelta(days=1),
        total=3,
    )
    items = tuple(BatchItem(f"t{i}", f"http://a.example/{i}") for i in range(3))
    await store.create_job(job, [BatchRecord("j1", "b0", items, NOW, NOW)])
    return job


async def finish(store: MemoryJobStore, changes: list[FinishTask]) -> None:
    claim = await store.claim_batch(BatchClaim("j1", "b0", NOW, NOW + timedelta(seconds=30)))
    assert isinstance(claim, Claimed)
    await store.settle(claim.handle, changes, NOW)


def pushed(event: WebhookEvent) -> PushedMessage:
    return PushedMessage("m1", event.to_message(), {}, "projects/p/subscriptions/s", None)


def sender(store: MemoryJobStore, log: MemoryWebhookLog, *steps: Any) -> tuple[Any, Any]:
    fetcher = ScriptedFetcher(*steps)
    return WebhookSender(store, log, fetcher, clock, [KEY], WebhookPolicy()), fetcher


def firecrawl_verified(call: Any) -> dict[str, Any]:
    """What a Firecrawl receiver does: HMAC-SHA256 of the raw body, compared in constant time."""
    expected = hmac.new(KEY.encode(), call.body, hashlib.sha256).hexdigest()
    assert hmac.compare_digest(call.headers["x-firecrawl-signature"], f"sha256={expected}")
    assert "webhook-signature" not in call.headers
    body: dict[str, Any] = json.loads(call.body)
    return body


async def test_pages_are_queued_only_for_a_webhook_that_wants_them() -> None:
    store, outbox = MemoryJobStore(), MemoryWebhookOutbox()
    events = JobEvents(store, outbox)
    ends_only = await job_of(store, WebhookSpec(url="http://h.example/"))
    assert await events.pages_finished("j1", ends_only.spec, [("t0", "http://a.example/0")], NOW)
    await events.started(ends_only)
    assert outbox.events == []

    wanting = ends_only.spec.model_copy(
        update={"webhook": WebhookSpec(url="http://h.example/", events=list(WEBHOOK_EVENTS))}
    )
    pages = [("t0", "http://a.example/0"), ("t1", "http://a.example/1")]
    assert await events.pages_finished("j1", wanting, pages, NOW)
    assert await events.pages_finished("j1", wanting, pages, NOW)  # a redelivery: same ids
    assert [e.type for e in outbox.events] == ["task.finished"] * 4
    assert outbox.events[0].id == outbox.events[2].id != outbox.events[1].id
    assert outbox.events[0].data == {"task_id": "t0", "url": "http://a.example/0"}


async def test_a_page_event_carries_the_stored_page_and_skips_unfinished_or_cancelled() -> None:
    store, outbox, log = MemoryJobStore(), MemoryWebhookOutbox(), MemoryWebhookLog()
    hook = WebhookSpec(url="http://h.example/", events=["task.finished"], metadata={"team": "a"})
    job = await job_of(store, hook)
    await finish(
        store,
        [
            FinishTask("t0", TaskOutcome(TaskStatus.SUCCEEDED, http_status=200, data=PAGE)),
            FinishTask("t1", TaskOutcome(TaskStatus.CANCELLED)),
        ],
    )
    pages = [(f"t{i}", f"http://a.example/{i}") for i in range(3)]
    await JobEvents(store, outbox).pages_finished("j1", job.spec, pages, clock())
    deliver, fetcher = sender(store, log, 204)
    for event in outbox.events:
        assert (await deliver.handle(pushed(event))).ack
    [call] = fetcher.calls  # t1 cancelled, t2 not finished: neither sent nor recorded
    body = json.loads(call.body)
    assert body["type"] == "task.finished" and body["metadata"] == {"team": "a"}
    assert body["data"]["task_id"] == "t0" and body["data"]["status"] == "succeeded"
    assert body["data"]["http_status"] == 200
    assert [d.type for d in await log.list("j1", 10)] == ["task.finished"]


async def test_firecrawl_shaped_events_verify_and_keep_their_webhook_id_on_a_retry() -> None:
    store, outbox, log = MemoryJobStore(), MemoryWebhookOutbox(), MemoryWebhookLog()
    hook = WebhookSpec(
        url="http://h.example/",
        events=list(WEBHOOK_EVENTS),
        metadata={"run": "7"},
        shape="firecrawl",
        headers={"X-Team": "a"},
    )
    job = await job_of(store, hook, crawl=True)
    events = JobEvents(store, outbox)
    await events.started(job)
    await finish(
        store,
        [
            FinishTask("t0", TaskOutcome(TaskStatus.SUCCEEDED, http_status=200, data=PAGE)),
            FinishTask("t1", TaskOutcome(TaskStatus.FAILED, http_status=404, error="http_404")),
            FinishTask("t2", TaskOutcome(TaskStatus.SUCCEEDED, http_status=200, data=PAGE)),
        ],
    )
    pages = [(f"t{i}", f"http://a.example/{i}") for i in range(3)]
    await events.pages_finished("j1", job.spec, pages, clock())
    assert await complete_if_done(store, "j1", clock, events)
    deliver, fetcher = sender(store, log, 500, 204)

    first = outbox.events[0]
    assert not (await deliver.handle(pushed(first))).ack  # answered 500: retried
    for event in outbox.events:
        assert (await deliver.handle(pushed(event))).ack

    bodies = [firecrawl_verified(call) for call in fetcher.calls]
    assert bodies[0]["webhookId"] == bodies[1]["webhookId"]  # the retry of the started event
    assert str(uuid.UUID(bodies[0]["webhookId"])) == bodies[0]["webhookId"]
    assert [b["type"] for b in bodies[1:]] == [
        "crawl.started",
        "crawl.page",
        "crawl.page",
        "crawl.page",
        "crawl.completed",
    ]
    started, ok, failed, _, completed = bodies[1:]
    assert started == {
        "success": True,
        "type": "crawl.started",
        "id": "j1",
        "webhookId": started["webhookId"],
        "data": [],
        "metadata": {"run": "7"},
        "timestamp": NOW.isoformat(),
    }
    assert ok["success"] is True and "error" not in ok
    [document] = ok["data"]
    assert document["markdown"] == "# Hello"
    assert document["metadata"]["sourceURL"] == "http://a.example/0"
    assert document["metadata"]["statusCode"] == 200
    assert failed["success"] is False and failed["error"] == "http_404"
    assert failed["data"][0]["metadata"]["error"] == "http_404"
    assert completed["success"] is True and completed["data"] == []
    assert all(call.headers["X-Team"] == "a" for call in fetcher.calls)


async def test_a_cancelled_batch_is_firecrawls_failed_event() -> None:
    store, outbox, log = MemoryJobStore(), MemoryWebhookOutbox(), MemoryWebhookLog()
    hook = WebhookSpec(url="http://h.example/", events=["job.cancelled"], shape="firecrawl")
    await job_of(store, hook)
    await store.cancel_job("j1", NOW)
    await JobEvents(store, outbox).ended("j1")
    deliver, fetcher = sender(store, log, 204)
    [event] = outbox.events
    assert (await deliver.handle(pushed(event))).ack
    body = firecrawl_verified(fetcher.calls[0])
    assert body["type"] == "batch_scrape.failed" and body["success"] is False
    assert body["error"] == "the job was cancelled"
