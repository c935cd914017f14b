"""WebhookOutbox on Pub/Sub: one message per event on the webhook topic, whose push
subscription (retry with backoff, dead-letter topic) calls the worker's webhook endpoint."""

from __future__ import annotations

import asyncio

from google.cloud import pubsub_v1
from google.cloud.pubsub_v1.types import PublisherOptions

from scrapejobs_shared.adapters.pubsub.call_deadline import PublishDeadline
from scrapejobs_shared.domain.webhook_events import WebhookEvent


class PubSubWebhookOutbox:
    def __init__(
        self, project_id: str, topic: str, deadline: PublishDeadline | None = None
    ) -> None:
        self._deadline = deadline or PublishDeadline()
        self._client = pubsub_v1.PublisherClient(
            publisher_options=PublisherOptions(enable_open_telemetry_tracing=False)
        )
        self._topic = self._client.topic_path(project_id, topic)

    async def publish(self, event: WebhookEvent) -> None:
        future = self._client.publish(
            self._topic,
            event.to_message(),
            **self._deadline.call,
            event=event.type,
            job_id=event.job_id,
        )
        try:
            await asyncio.wrap_future(future)
        except BaseException as exc:
            outage = self._deadline.outage_of(exc)
            if outage is exc:
                raise
            raise outage from exc

    async def close(self) -> None:
        await asyncio.to_thread(self._client.stop)
