"""In-memory TaskPublisher (unit tests): records what was published."""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from scrapejobs_shared.messaging.task_message import BatchMessage, BundleMessage, TaskMessage
from scrapejobs_shared.ports.dependency_unavailable import PUBSUB, DependencyUnavailable


class MemoryTaskPublisher:
    def __init__(self, fail_after: int | None = None) -> None:
        self.published: list[tuple[TaskMessage, dict[str, str]]] = []
        self._fail_after = fail_after
        self.away = False  # Pub/Sub not answering: each message's result is the outage

    @property
    def batches(self) -> list[tuple[BatchMessage, dict[str, str]]]:
        """Every published batch (a bundle's one by one), with its message's attributes."""
        return [
            (batch, attributes)
            for message, attributes in self.published
            for batch in (message.batches if isinstance(message, BundleMessage) else (message,))
        ]

    async def publish(
        self, messages: Sequence[TaskMessage], attributes: Mapping[str, str]
    ) -> list[str | BaseException]:
        results: list[str | BaseException] = []
        for message in messages:
            if self.away:
                results.append(DependencyUnavailable(PUBSUB, 5.0))
                continue
            if self._fail_after is not None and len(self.published) >= self._fail_after:
                results.append(ConnectionError("publish failed"))
                continue
            self.published.append((message, dict(attributes)))
            results.append(str(len(self.published)))
        return results

    async def check(self) -> None:
        if self._fail_after is not None and len(self.published) >= self._fail_after:
            raise ConnectionError("the memory publisher is failing")

    async def close(self) -> None:
        return None
