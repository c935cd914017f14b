"""TaskPublisher on Google Cloud Pub/Sub, batching for large submissions."""

from __future__ import annotations

import asyncio
from collections.abc import Mapping, Sequence

from google.cloud import pubsub_v1
from google.cloud.pubsub_v1.types import BatchSettings, PublisherOptions

from scrapejobs_shared.adapters.pubsub.call_deadline import PublishDeadline
from scrapejobs_shared.domain.lanes import DEFAULT_LANE, LANES
from scrapejobs_shared.messaging.task_message import FORMAT_VERSION, TaskMessage
from scrapejobs_shared.messaging.topology import LANE_ATTRIBUTE, in_lane

# Up to 500 messages per publish request (the client's default: 100), and a wait of 1 ms (its
# default: 10 ms) for more to join a request: a submission publishes its messages in one loop,
# so they still share a few requests, while a one-URL job's message (a POST that answers only
# once it is published) leaves at once instead of 10-20 ms later.
BATCH = BatchSettings(max_messages=500, max_bytes=4 * 1024 * 1024, max_latency=0.001)


class PubSubTaskPublisher:
    def __init__(
        self, project_id: str, topic: str, deadline: PublishDeadline | None = None
    ) -> None:
        self._deadline = deadline or PublishDeadline()
        self._client = pubsub_v1.PublisherClient(
            batch_settings=BATCH,
            publisher_options=PublisherOptions(enable_open_telemetry_tracing=False),
        )
        self._topic = self._client.topic_path(project_id, topic)
        self._lanes = {
            lane: self._client.topic_path(project_id, in_lane(topic, lane)) for lane in LANES
        }

    async def publish(
        self, messages: Sequence[TaskMessage], attributes: Mapping[str, str]
    ) -> list[str | BaseException]:
        """To the topic of the ``lane`` attribute's priority lane (``normal`` without one).
        A message Pub/Sub did not take within the deadline is a ``DependencyUnavailable``."""
        attrs = {**attributes, "format": FORMAT_VERSION}
        topic = self._lanes.get(attrs.get(LANE_ATTRIBUTE, DEFAULT_LANE), self._topic)
        futures = [
            asyncio.wrap_future(
                self._client.publish(topic, message.encode(), **self._deadline.call, **attrs)
            )
            for message in messages
        ]
        results = await asyncio.gather(*futures, return_exceptions=True)
        return [self._deadline.outage_of(r) if isinstance(r, BaseException) else r for r in results]

    async def check(self) -> None:
        """Look the topic up (needs pubsub.topics.get: roles/pubsub.viewer on the topic)."""
        await asyncio.to_thread(self._client.get_topic, topic=self._topic, timeout=3, retry=None)

    async def close(self) -> None:
        await asyncio.to_thread(self._client.stop)
