"""A job's window on a host moves on: when one of its chained batches has started its last
task (on its first run), the job's next held batch of that host is released and published
(``ports/held_batches.py``), so it reaches the broker while this batch's last pages are
fetched. A release or publish that fails is left to the reconcile (a chain with no active
batch; an active batch nothing wrote), never to the delivery, but for a crawl's finder's (below).

A crawl's window is kept by count instead (``CRAWL_WINDOW``): its found batches are stored
held, and released while fewer than the window of their host are active, by the batch that
found them and by each of the crawl's batches once it has ended. Published as they were found,
hundreds of a site's batches waited at once for its 8 slots, each claimed, refused, deferred
and claimed again, a write of the batch and its counter shard each turn (``make scale``, a
crawl of 10,000 pages: 189 counter shards at 1.9 writes a second). Either the finder's count
sees the ended batch gone or the ender's release sees the found batch held, so a found batch
never waits with nothing of its host active to release it. The finder's own release and
publish let an outage reach its task, which is delivered again and publishes its found batches
once more; an ender's failure is the reconcile's.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Sequence

from scrapejobs_shared.delivery.batching import HOST_WINDOW, batch_group
from scrapejobs_shared.delivery.enqueue import Enqueuer
from scrapejobs_shared.domain.clock import Clock
from scrapejobs_shared.domain.records import BatchRecord
from scrapejobs_shared.ports.held_batches import HeldBatches

log = logging.getLogger(__name__)
CRAWL_WINDOW = HOST_WINDOW  # a crawl's batches of one host active at once


class HeldChain:
    def __init__(self, held: HeldBatches | None, enqueuer: Enqueuer, clock: Clock) -> None:
        self._held = held
        self._enqueuer = enqueuer
        self._clock = clock

    @property
    def holds(self) -> bool:
        """Whether batches can be held (a store of held batches): without one, a crawl's found
        batches are published at once."""
        return self._held is not None

    async def found(self, batches: Sequence[BatchRecord]) -> None:
        """A crawl's found batches, stored held: released as their hosts' windows allow
        (published at once when nothing holds them)."""
        if self._held is None:
            await self._enqueuer.publish(batches)
            return
        # a redelivered finder's children, released already: published again (its publish
        # may have failed); an outage reaches the finder's task, which is delivered again
        await self._enqueuer.publish([batch for batch in batches if not batch.held])
        for job_id, group in sorted({(b.job_id, batch_group(b)) for b in batches}):
            await self._fill(self._held, job_id, group)

    async def refill(self, job_id: str, group: str) -> None:
        """The crawl's held batches of ``group`` released and published while fewer than
        ``CRAWL_WINDOW`` of them are active; a failure is the reconcile's."""
        if self._held is None:
            return
        try:
            await self._fill(self._held, job_id, group)
        except Exception:
            log.exception("releasing a crawl's found batches failed", extra={"job_id": job_id})

    async def _fill(self, held: HeldBatches, job_id: str, group: str) -> None:
        released = await held.release_to_window(job_id, group, CRAWL_WINDOW, self._clock())
        await self._enqueuer.publish(released)

    def next_release(self, batch: BatchRecord, deferrals: int, crawl: bool = False) -> NextRelease:
        """What this run of ``batch`` (as claimed, its reused pages included) releases: the
        job's next held batch of its group when it is chained and this is its first run
        (never deferred, no task run before: the claim counted this run's attempt), so that
        each batch releases one at most and the window never widens; else nothing. A
        ``crawl``'s batch refills its host's window once it has ended, whatever its run."""
        first_run = deferrals == 0 and all(item.attempts <= 1 for item in batch.fetch_items)
        moves_on = self._held is not None and batch.chained and first_run
        group = batch_group(batch)
        return NextRelease(
            self, batch.job_id, group if moves_on else None, group if crawl else None
        )

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

    def __init__(
        self, chain: HeldChain, job_id: str, group: str | None, refills: str | None = None
    ) -> None:
        self._chain = chain
        self._job_id = job_id
        self._group = group
        self._refills = refills  # a crawl's: the host whose window its end refills
        self._task: asyncio.Task[None] | None = None

    def start(self) -> None:
        if self._group is not None and self._task is None:
            self._task = asyncio.create_task(self._chain.release_next(self._job_id, self._group))

    async def done(self) -> None:
        """Wait for the release, if one started (it logs its own failures: never the run's)."""
        if self._task is not None:
            await self._task

    async def ended(self) -> None:
        """The run has ended (its last write made): a crawl's batch no longer counts among
        its host's active ones, and the window is refilled."""
        if self._refills is not None:
            await self._chain.refill(self._job_id, self._refills)
