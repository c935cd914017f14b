"""A job's window on a host moves on: when one of its chained batches has started its last
task (on its first run), the job's next held batch of that host is released and published
(``ports/held_batches.py``), so it reaches the broker while this batch's last pages are
fetched. A release or publish that fails is left to the reconcile (a chain with no active
batch; an active batch nothing wrote), never to the delivery."""

from __future__ import annotations

import logging

from scrapejobs_shared.delivery.enqueue import Enqueuer
from scrapejobs_shared.domain.clock import Clock
from scrapejobs_shared.domain.records import BatchRecord
from scrapejobs_shared.ports.held_batches import HeldBatches

log = logging.getLogger(__name__)


class HeldChain:
    def __init__(self, held: HeldBatches | None, enqueuer: Enqueuer, clock: Clock) -> None:
        self._held = held
        self._enqueuer = enqueuer
        self._clock = clock

    def moves_on(self, batch: BatchRecord, deferrals: int) -> bool:
        """Whether this run of ``batch`` releases the next: it is chained, and this is its
        first run (never deferred, no task run before: the claim counted this run's attempt),
        so that each batch releases one at most and the window never widens."""
        first_run = deferrals == 0 and all(item.attempts <= 1 for item in batch.fetch_items)
        return self._held is not None and batch.chained and first_run

    async def release_next(self, job_id: str, group: str) -> None:
        if self._held is None:
            return
        try:
            released = await self._held.release(job_id, group, self._clock(), 1)
            if released:
                await self._enqueuer.publish(released)
        except Exception:
            log.exception("releasing the next held batch failed", extra={"job_id": job_id})
