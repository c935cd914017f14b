"""A batch Pub/Sub gave up on (its dead-letter topic pushed it here). Pub/Sub counts every
delivery that did not succeed, those that never reached a worker included: a worker down or
restarting for longer than the retries' backoff, a delivery that found the batch leased by
another. So its fetch tasks that still had attempts left (fewer than the subscription's
``max_delivery_attempts``: no worker ran them that often) are published again, at most
``MAX_REVIVALS`` times per batch; the rest end ``dead_lettered``, their last error kept, and
can be replayed. Tasks of the processing lane (which counts no attempts) end at once.

While a delivery still holds a batch, the dead letter is nacked: it comes back later."""

from __future__ import annotations

import logging
from collections.abc import Mapping
from dataclasses import dataclass

from scrapejobs_shared.delivery.batching import authority
from scrapejobs_shared.delivery.completion import complete_if_done
from scrapejobs_shared.delivery.enqueue import REVIVALS, Enqueuer, StoreForEnqueue
from scrapejobs_shared.delivery.job_events import JobEvents
from scrapejobs_shared.domain.clock import Clock
from scrapejobs_shared.domain.lanes import DEFAULT_LANE, PROCESSING_LANE
from scrapejobs_shared.domain.records import TaskOutcome
from scrapejobs_shared.domain.statuses import FETCH_STATUSES, TaskStatus
from scrapejobs_shared.messaging.task_message import BatchMessage, PushedMessage
from scrapejobs_shared.messaging.topology import LANE_ATTRIBUTE
from scrapejobs_shared.ports.batch_store import Busy, Missing
from scrapejobs_worker.batches.held_chain import HeldChain
from scrapejobs_worker.delivery.delivery_metrics import DeliveryMetrics
from scrapejobs_worker.delivery.verdict import Verdict

log = logging.getLogger(__name__)
MAX_REVIVALS = 3  # a batch's returns from dead letters before its open tasks end there
DEAD = TaskOutcome(TaskStatus.DEAD_LETTERED)


@dataclass(eq=False)
class DeadLetters:
    store: StoreForEnqueue
    enqueuer: Enqueuer
    chain: HeldChain
    clock: Clock
    metrics: DeliveryMetrics
    max_delivery_attempts: int
    events: JobEvents | None = None

    async def handle(self, pushed: PushedMessage, messages: tuple[BatchMessage, ...]) -> Verdict:
        """Each batch of the dead letter (one, or a bundle's): the answer is the first that
        must be tried again, else done."""
        verdicts = [await self._batch(pushed, message) for message in messages]
        return next((v for v in verdicts if not v.ack), verdicts[0])

    async def _batch(self, pushed: PushedMessage, message: BatchMessage) -> Verdict:
        lane = pushed.attributes.get(LANE_ATTRIBUTE, DEFAULT_LANE)
        revivals = _revivals(pushed.attributes)
        processing = lane == PROCESSING_LANE  # a lane's dead letters end that lane's tasks only
        revive = not processing and revivals < MAX_REVIVALS
        closed = await self.store.close_batch(
            message.job_id,
            message.batch_id,
            DEAD,
            self.clock(),
            {TaskStatus.PROCESSING} if processing else FETCH_STATUSES,
            spent_at=self.max_delivery_attempts if revive else None,
        )
        if isinstance(closed, Busy):
            return Verdict.retry("the batch is still being processed", "busy")
        if isinstance(closed, Missing):
            return Verdict.done("unknown batch")
        self.metrics.dead_lettered(pushed.subscription, len(closed.finished))
        if closed.finished:
            log.warning(
                "tasks dead-lettered",
                extra={
                    "job_id": message.job_id,
                    "batch_id": message.batch_id,
                    "tasks": len(closed.finished),
                },
            )
        if closed.job_may_be_done:
            await complete_if_done(self.store, message.job_id, self.clock, self.events)
        if closed.finished:
            await self.chain.release_next(message.job_id, authority(message.tasks[0].url))
        still_open = set(closed.left_open)
        left = tuple(task for task in message.tasks if task.id in still_open)
        if left:
            again = message.model_copy(update={"tasks": left})
            if not await self.enqueuer.revive(again, lane, revivals + 1):
                return Verdict.retry("could not publish the dead letter's open tasks", "publish")
            log.warning(
                "dead letter published again",
                extra={
                    "job_id": message.job_id,
                    "batch_id": message.batch_id,
                    "tasks": len(left),
                    "revivals": revivals + 1,
                },
            )
        return Verdict.done("revived" if left else "dead-lettered")


def _revivals(attributes: Mapping[str, str]) -> int:
    value = attributes.get(REVIVALS, "0")
    return int(value) if value.isdigit() else MAX_REVIVALS
