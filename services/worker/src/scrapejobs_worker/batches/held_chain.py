"""A job's window on a host moves on: when one of its chained batches has started its last
task (on its first run), the job's next held batch of that host is released and published
(``ports/held_batches.py``), so it reaches the broker while this batch's last pages are
fetched. A release or publish that fails is left to the reconcile (a chain with no active
batch; an active batch nothing wrote), never to the delivery."""

from __future__ import annotations

import asyncio
import logging

from scrapejobs_shared.delivery.batching import batch_group
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

    def next_release(self, batch: BatchRecord, deferrals: int) -> NextRelease:
        """What this run of ``batch`` (as claimed, its reused pages included) releases: the
        job's next held batch of its group when it is chained and this is its first run
        (never deferred, no task run before: the claim counted this run's attempt), so that
        each batch releases one at most and the window never widens; else nothing."""
        first_run = deferrals == 0 and all(item.attempts <= 1 for item in batch.fetch_items)
        moves_on = self._held is not None and batch.chained and first_run
        return NextRelease(self, batch.job_id, batch_group(batch) if moves_on else None)

    async def release_next(self, job_id: str, group: str) -> None:
        if self._held is None:
            return
        try:
            released = await self._held.release(job_id, group, self._clock(), 1)
            if released:
                await self._enqueuer.publish(released)
        except Exception:
            log.exception("releasing the next held batch failed", extra={"job_id": job_id})


class NextRelease:
    """The one release a run of a batch makes, started once (by the first of its lanes to
    find no task left, or at once when it has none to fetch) and awaited before it ends."""

    def __init__(self, chain: HeldChain, job_id: str, group: str | None) -> None:
        self._chain = chain
        self._job_id = job_id
        self._group = group
        self._task: asyncio.Task[None] | None = None

    def start(self) -> None:
        if self._group is not None and self._task is None:
            self._task = asyncio.create_task(self._chain.release_next(self._job_id, self._group))

    async def done(self) -> None:
        """Wait for the release, if one started (it logs its own failures: never the run's)."""
        if self._task is not None:
            await self._task
