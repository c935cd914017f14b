"""The task publisher port: task messages onto the queue (Pub/Sub in production)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Protocol

from scrapejobs_shared.messaging.task_message import TaskMessage


class TaskPublisher(Protocol):
    async def publish(
        self, messages: Sequence[TaskMessage], attributes: Mapping[str, str]
    ) -> list[str | BaseException]:
        """Publish every message; per message the server id or the error that stopped it."""

    async def check(self) -> None:
        """Raise if the queue cannot be reached (the topic is looked up)."""

    async def close(self) -> None: ...
