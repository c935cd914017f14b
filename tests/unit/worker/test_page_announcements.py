"""The worker announces each page a batch ended (not a retried one) once the results are
stored, again under the same ids when a finished batch is delivered again (its first delivery
may have died before announcing), and has the delivery retried when they could not be
queued."""

from __future__ import annotations

from datetime import UTC, datetime

from scrapejobs_shared.adapters.memory.job_store import MemoryJobStore
from scrapejobs_shared.adapters.memory.webhooks import MemoryWebhookOutbox
from scrapejobs_shared.delivery.job_events import JobEvents
from scrapejobs_shared.domain.webhook_events import WebhookEvent
from support.worker_fakes import PerUrlFetcher, build_processor, push, setup_job


def clock() -> datetime:
    return datetime(2026, 11, 26, 10, tzinfo=UTC)


WANTS_PAGES = {"url": "http://h.example/in", "events": ["task.finished"]}


class DownOutbox(MemoryWebhookOutbox):
    async def publish(self, event: WebhookEvent) -> None:
        raise RuntimeError("pubsub is down")


async def test_each_ended_page_is_announced_and_announced_again_on_a_redelivery() -> None:
    store, outbox = MemoryJobStore(), MemoryWebhookOutbox()
    body = {"url": "http://a.example/", "webhook": WANTS_PAGES}
    batch = await setup_job(store, body, urls=4)
    fetcher = PerUrlFetcher({"http://a.example/?n=1": [404], "http://a.example/?n=2": [503, 200]})
    processor = build_processor(store, fetcher, clock, events=JobEvents(store, outbox))

    first = await processor.handle_push(push(batch=batch))
    assert not first.ack  # n=2 answered 503: retried
    assert sorted(e.data["task_id"] for e in outbox.events) == ["t", "t1", "t3"]
    assert await processor.handle_push(push(batch=batch))
    ids = {e.data["task_id"]: e.id for e in outbox.events}
    assert sorted(ids) == ["t", "t1", "t2", "t3"] and len(outbox.events) == 4

    again = await processor.handle_push(push(batch=batch))  # finished: all four again
    assert again.ack and len(outbox.events) == 8
    assert {e.data["task_id"]: e.id for e in outbox.events[4:]} == ids


async def test_pages_not_queued_have_the_delivery_retried_and_no_webhook_queues_none() -> None:
    store = MemoryJobStore()
    batch = await setup_job(store, {"url": "http://a.example/", "webhook": WANTS_PAGES})
    processor = build_processor(
        store, PerUrlFetcher({}), clock, events=JobEvents(store, DownOutbox())
    )
    assert not (await processor.handle_push(push(batch=batch))).ack
    assert not (await processor.handle_push(push(batch=batch))).ack  # finished, still unsaid

    store, outbox = MemoryJobStore(), MemoryWebhookOutbox()
    batch = await setup_job(store, {"url": "http://a.example/"})
    processor = build_processor(store, PerUrlFetcher({}), clock, events=JobEvents(store, outbox))
    assert (await processor.handle_push(push(batch=batch))).ack
    assert outbox.events == []
