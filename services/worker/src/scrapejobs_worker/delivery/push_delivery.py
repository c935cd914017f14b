"""What every lane does with a push, in one place: decode it (a malformed one is recorded and
acked, never redelivered), give it its deadline (the subscription's ack deadline less a
margin), run its batches with the lane's own step, fold their verdicts into the push's (acked
when every batch's verdict acks; otherwise nacked, and the redelivery skips the batches that
finished), and record the delivery's duration and outcome. The lanes (batch_processor.py:
fetching; processing_lane.py: the ai stage) differ only in their step; ``BatchPolicy`` is the
delivery's settings both run by."""

from __future__ import annotations

import logging
import time
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass

from scrapejobs_shared.domain.clock import Clock
from scrapejobs_shared.messaging.task_message import BatchMessage, MalformedMessage, PushedMessage
from scrapejobs_shared.ports.task_results import TaskResults
from scrapejobs_worker.delivery.delivery_metrics import DeliveryMetrics
from scrapejobs_worker.delivery.verdict import Verdict

# a lane's step: the push's batches and their deadline (monotonic) → each batch's verdict, or
# the error it met (the first error is raised on, once the delivery is recorded)
Step = Callable[[tuple[BatchMessage, ...], float], Awaitable[Sequence[Verdict | BaseException]]]

log = logging.getLogger(__name__)


@dataclass(frozen=True, slots=True)
class BatchPolicy:
    ack_deadline_s: float = 60.0  # the subscription's: the push request's timeout
    deadline_margin_s: float = 5.0  # answer this long before the ack deadline
    concurrency: int = 8  # tasks of one batch in flight at once
    flush_interval_s: float = 1.25  # results become visible this often (the setting's)
    lease_s: float = 40.0  # a claimed batch's lease, renewed while it runs
    store_timeout_s: float = 5.0  # a Firestore call's deadline (SCRAPEJOBS_FIRESTORE_TIMEOUT_S)
    max_delivery_attempts: int = 5  # the subscription's (dead_letters.py)

    @property
    def budget_s(self) -> float:
        """How long a push may take: answered before the ack deadline, by the margin."""
        return self.ack_deadline_s - self.deadline_margin_s


@dataclass(eq=False)
class PushDelivery:
    store: TaskResults
    clock: Clock
    metrics: DeliveryMetrics
    policy: BatchPolicy

    async def deliver(self, pushed: PushedMessage, step: Step) -> Verdict:
        started = time.perf_counter()

        def recorded(error: str | None) -> None:
            self.metrics.delivery(pushed.subscription, time.perf_counter() - started, error)

        messages = await self.batches_of(pushed)
        if messages is None:
            recorded("malformed_message")
            return Verdict.done("malformed message recorded")
        try:
            outcomes = await step(messages, time.monotonic() + self.policy.budget_s)
        except BaseException as exc:
            recorded(type(exc).__qualname__)
            raise
        for outcome in outcomes:
            if isinstance(outcome, BaseException):
                recorded(type(outcome).__qualname__)
                raise outcome
        verdicts = [outcome for outcome in outcomes if isinstance(outcome, Verdict)]
        verdict = next((v for v in verdicts if not v.ack), verdicts[0])
        if len(verdicts) > 1 and verdict.ack:
            verdict = Verdict.done(f"bundle of {len(verdicts)} batches done")
        recorded(verdict.error_type)
        return verdict

    async def batches_of(self, pushed: PushedMessage) -> tuple[BatchMessage, ...] | None:
        """The push's batches; None for a malformed one, recorded (never redelivered)."""
        try:
            return pushed.batches()
        except MalformedMessage as exc:
            log.error("malformed message", extra={"message_id": pushed.message_id, "why": str(exc)})
            await self.store.record_rejected_message(
                pushed.message_id, str(exc), pushed.data, self.clock()
            )
            return None
