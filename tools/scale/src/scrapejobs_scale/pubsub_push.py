"""Pub/Sub push, simulated: the services' publisher port on one side; on the other, each
published message pushed to the worker service under the push window (slow start: up on each
success, halved on each failure), delivered again when its push fails (after the retry
policy's backoff) or outlives the ack deadline (while the first push runs on), and forwarded
to the dead-letter endpoint after ``max_delivery_attempts``. ``loss`` drops that share of
pushes on the floor, never to be delivered again, as the emulator does to pushes refused
during a restart: what reconcile is for."""

from __future__ import annotations

import asyncio
import base64
import random
from collections import deque
from collections.abc import Awaitable, Callable, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any

from scrapejobs_scale.limits import PushLimits
from scrapejobs_shared.messaging.task_message import TaskMessage

Push = Callable[[str, dict[str, Any]], Awaitable[int]]
SUBSCRIPTION = "projects/scale/subscriptions/scrape-tasks-push"


@dataclass
class Message:
    id: str
    data: bytes
    attributes: dict[str, str]
    attempts: int = 0
    acked: bool = False


@dataclass
class PushCounts:
    published: int = 0
    pushes: int = 0
    acked: int = 0
    nacked: int = 0
    expired: int = 0  # pushes that outlived the ack deadline (delivered again)
    lost: int = 0
    dead_lettered: int = 0
    peak_window: int = 0


@dataclass
class SimulatedPubSub:
    push: Push
    push_path: str
    dead_letter_path: str
    limits: PushLimits = field(default_factory=PushLimits)
    max_delivery_attempts: int = 5
    min_backoff_s: float = 10.0
    max_backoff_s: float = 600.0
    loss: float = 0.0
    rng: random.Random = field(default_factory=lambda: random.Random(7))
    counts: PushCounts = field(default_factory=PushCounts)

    def __post_init__(self) -> None:
        self._queue: deque[Message] = deque()
        self._window = float(self.limits.window_start)
        self._in_flight = 0
        self._ready = asyncio.Event()
        self._tasks: set[asyncio.Task[None]] = set()
        self._stopped = False

    async def publish(
        self, messages: Sequence[TaskMessage], attributes: Mapping[str, str]
    ) -> list[str | BaseException]:
        ids: list[str | BaseException] = []
        for message in messages:
            self.counts.published += 1
            found = Message(str(self.counts.published), message.encode(), dict(attributes))
            self._queue.append(found)
            ids.append(found.id)
        self._ready.set()
        return ids

    async def check(self) -> None:
        return None

    async def close(self) -> None:
        return None

    @property
    def idle(self) -> bool:
        return not self._queue and self._in_flight == 0

    async def run(self) -> None:
        """Push until ``stop()``."""
        while not self._stopped:
            while self._queue and self._in_flight < int(self._window):
                self._spawn(self._deliver(self._queue.popleft()))
            self._ready.clear()
            await self._ready.wait()

    def stop(self) -> None:
        self._stopped = True
        self._ready.set()

    async def drop(self) -> None:
        """Pushes still under way end here (the run is over), before the instances stop."""
        tasks = list(self._tasks)
        for task in tasks:
            task.cancel()
        await asyncio.gather(*tasks, return_exceptions=True)

    def _spawn(self, work: Awaitable[None]) -> None:
        task = asyncio.ensure_future(work)
        self._tasks.add(task)
        task.add_done_callback(self._tasks.discard)

    async def _deliver(self, message: Message) -> None:
        message.attempts += 1
        self._in_flight += 1
        self.counts.peak_window = max(self.counts.peak_window, self._in_flight)
        try:
            if self.rng.random() < self.loss:
                self.counts.lost += 1
                return
            self.counts.pushes += 1
            push = asyncio.ensure_future(self.push(self.push_path, envelope(message)))
            done, _ = await asyncio.wait({push}, timeout=self.limits.ack_deadline_s)
            if not done:  # the deadline passed: delivered again, the first push runs on
                self.counts.expired += 1
                self._slower()
                self._again(message, 0.0)
                return
            status = push.result()
            if status in (102, 200, 201, 202, 204):
                message.acked = True
                self.counts.acked += 1
                self._window = min(self.limits.window_max, self._window + 1)
            else:
                self.counts.nacked += 1
                self._slower()
                self._again(message, self._backoff(message.attempts))
        finally:
            self._in_flight -= 1
            self._ready.set()

    def _slower(self) -> None:
        self._window = max(float(self.limits.window_start), self._window / 2)

    def _backoff(self, attempts: int) -> float:
        return float(min(self.max_backoff_s, self.min_backoff_s * 2 ** (attempts - 1)))

    def _again(self, message: Message, after_s: float) -> None:
        if message.attempts >= self.max_delivery_attempts:
            self.counts.dead_lettered += 1
            self._spawn(self._dead_letter(message))
            return
        self._spawn(self._later(message, after_s))

    async def _later(self, message: Message, after_s: float) -> None:
        await asyncio.sleep(after_s)
        self._queue.append(message)
        self._ready.set()

    async def _dead_letter(self, message: Message) -> None:
        body = envelope(message)
        attributes = body["message"]["attributes"]
        attributes["CloudPubSubDeadLetterSourceDeliveryCount"] = str(message.attempts)
        await self.push(self.dead_letter_path, body)


def envelope(message: Message) -> dict[str, Any]:
    return {
        "message": {
            "data": base64.b64encode(message.data).decode(),
            "attributes": dict(message.attributes),
            "messageId": message.id,
            "publishTime": datetime.now(UTC).isoformat().replace("+00:00", "Z"),
        },
        "subscription": SUBSCRIPTION,
        "deliveryAttempt": message.attempts,
    }
