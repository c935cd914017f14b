"""A deferred batch is published again at its time, not at once (ports/held_batches.py).

A batch whose deferred tasks cannot be admitted for a while (its job's own pace, its host's
``Crawl-delay``, a breaker or a ``Retry-After`` hold, or a host busy for deferral after
deferral: :func:`backoff_s`; at least :data:`WAIT_APART_S`) waits unpublished: this process
wakes it when its time comes and publishes it with its deferrals, so no push is held, and no
delivery made, only to wait. A wake this process cannot make (it stopped) is the reconcile's
(``overdue``); a wait that cannot be stored (a batch its job's document holds, an outage) is
published again at once, as shorter waits are: the next delivery waits those out in place.
"""

from __future__ import annotations

import asyncio
import logging
from dataclasses import dataclass, field
from datetime import timedelta

from scrapejobs_shared.delivery.enqueue import Enqueuer
from scrapejobs_shared.domain.clock import Clock
from scrapejobs_shared.domain.records import BatchRecord
from scrapejobs_shared.ports.dependency_unavailable import DependencyUnavailable
from scrapejobs_shared.ports.held_batches import HeldBatches

WAIT_APART_S = 10.0  # shorter waits: published again at once (a delivery waits this long)
CLOSE_S = 5.0  # stopping: the longest spent waking what waits on this process
FREE_DEFERRALS = 3  # deferrals published again after their own wait only
BACKOFF_CAP_S = 60.0  # the longest a batch deferred again and again waits


def backoff_s(deferrals: int) -> float:
    """The least wait of a batch deferred ``deferrals`` times: none for the first
    ``FREE_DEFERRALS``, then 1 s doubling to ``BACKOFF_CAP_S``, so that a batch that keeps
    finding its host busy (one host, many instances) waits out of the way, unpublished, rather
    than going round claims. ``make scale``'s crawl of one site from 200 instances: its busiest
    batches were claimed, refused a slot and published again over 400 times, a commit of the
    batch, its counter shard and its result each time."""
    if deferrals <= FREE_DEFERRALS:
        return 0.0
    return min(BACKOFF_CAP_S, 2.0 ** (deferrals - FREE_DEFERRALS - 1))


log = logging.getLogger(__name__)


@dataclass(eq=False)
class BatchWaits:
    held: HeldBatches | None
    enqueuer: Enqueuer
    clock: Clock
    apart_s: float = WAIT_APART_S
    _timers: dict[tuple[str, str], asyncio.TimerHandle] = field(init=False, default_factory=dict)
    _wakes: set[asyncio.Task[None]] = field(init=False, default_factory=set)

    @property
    def waiting(self) -> int:
        """Batches this process will wake."""
        return len(self._timers)

    async def defer(self, batch: BatchRecord, deferrals: int, wait_s: float) -> bool:
        """Publish ``batch`` (its deferred tasks) again, with ``deferrals``: at once, or in
        ``wait_s`` (at least its ``backoff_s``) when that is long; False when it could not be
        (the caller nacks)."""
        wait_s = max(wait_s, backoff_s(deferrals))
        if self.held is not None and wait_s >= self.apart_s:
            now = self.clock()
            until = now + timedelta(seconds=wait_s)
            try:
                waits = await self.held.wait(batch, until, deferrals, now)
            except DependencyUnavailable:
                waits = False
            if waits:
                self._wake_in(batch.job_id, batch.id, wait_s)
                return True
        return await self.enqueuer.republish(batch, deferrals)

    def _wake_in(self, job_id: str, batch_id: str, delay_s: float) -> None:
        key = (job_id, batch_id)
        earlier = self._timers.pop(key, None)
        if earlier is not None:
            earlier.cancel()
        loop = asyncio.get_running_loop()
        self._timers[key] = loop.call_later(delay_s, self._start_wake, key)

    def _start_wake(self, key: tuple[str, str]) -> None:
        self._timers.pop(key, None)
        task = asyncio.get_running_loop().create_task(self._wake(*key))
        self._wakes.add(task)
        task.add_done_callback(self._wakes.discard)

    async def _wake(self, job_id: str, batch_id: str) -> None:
        assert self.held is not None
        extra = {"job_id": job_id, "batch_id": batch_id}
        try:
            for batch in await self.held.wake(job_id, batch_id, self.clock()):
                if not await self.enqueuer.republish(batch, batch.wait_deferrals):
                    log.warning("a woken batch was not published: the reconcile will", extra=extra)
        except Exception:
            log.exception("waking a deferred batch failed: the reconcile will", extra=extra)

    async def close(self) -> None:
        """Stopping: wake what waits on this process now (early is harmless: its pace still
        holds at the gate) rather than leave it to the reconcile, within :data:`CLOSE_S`."""
        keys = list(self._timers)
        for timer in self._timers.values():
            timer.cancel()
        self._timers.clear()
        pending = [*(self._wake(*key) for key in keys), *self._wakes]
        if not pending:
            return
        try:
            async with asyncio.timeout(CLOSE_S):
                await asyncio.gather(*pending)
        except TimeoutError:
            log.warning("deferred batches left to the reconcile", extra={"batches": len(keys)})
