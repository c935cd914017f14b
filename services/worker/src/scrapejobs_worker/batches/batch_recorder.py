"""Writing one claimed batch's task changes: buffered and committed together, at least every
``interval_s`` while the batch runs and there is something to record, and once at the end.
Each commit makes the finished results visible, renews the batch's lease (dropped at the end)
and tells the batch whether its job was cancelled. A batch with nothing to record (its lanes
wait for a host's slots, or fetch slow pages) reads whether its job was cancelled every
``interval_s`` instead, and commits only to renew its lease, every third of it: a waiting
batch's commit every second had been two writes a second on its document and its counter
shard, or on its job's document (``make scale``: a crawl's waiting batches, one-URL jobs
waiting for their host). So a running batch stops starting tasks within ``interval_s`` of a
cancel, whether or not any of its tasks has finished yet.

One recorder per delivery, and it is the only writer of its batch, so its commits are blind
writes guarded by the batch's last update time (see the store port). A commit also carries the
process's report for the workers view when one is due (worker_heartbeat.py).
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import time
from datetime import timedelta

from scrapejobs_shared.domain.batch_transitions import FinishTask
from scrapejobs_shared.domain.clock import Clock
from scrapejobs_shared.ports.batch_store import BatchStore, Settled, TaskChange
from scrapejobs_shared.ports.dependency_unavailable import DependencyUnavailable
from scrapejobs_worker.batches.worker_heartbeat import WorkerHeartbeat

log = logging.getLogger(__name__)
OUTAGE_RETRY_S = 1.0  # between tries of the last write while the store does not answer


class BatchRecorder:
    def __init__(
        self,
        store: BatchStore,
        handle: object,
        clock: Clock,
        *,
        interval_s: float,
        lease: timedelta,
        cancelled: bool = False,
        heartbeat: WorkerHeartbeat | None = None,
    ) -> None:
        self._heartbeat = heartbeat or WorkerHeartbeat(None, clock, "local")
        self._store = store
        self._handle = handle
        self._clock = clock
        self._interval_s = interval_s
        self._lease = lease
        self._pending: list[TaskChange] = []
        self._last_write = time.monotonic()
        self._lock = asyncio.Lock()
        self._ticker: asyncio.Task[None] | None = None
        self._committed = False  # a commit while the batch ran (the ticker's)
        self.cancelled = cancelled  # the job's cancel, as the last write saw it
        self.job_may_be_done = False
        self.job_completed = False  # a write completed the job (one that holds its batch)
        self.finished = 0

    def start(self) -> None:
        self._ticker = asyncio.create_task(self._tick())

    def add(self, change: TaskChange) -> None:
        self._pending.append(change)

    async def close(self, keep_trying_until: float | None = None, rested: bool = False) -> None:
        """Write what is left and give the lease back (the batch's next delivery need not
        wait for it). While the store does not answer and results are held (pages fetched,
        whose loss would fetch them again), the write is tried again every
        ``OUTAGE_RETRY_S`` until the monotonic time ``keep_trying_until``.

        ``rested``: when the batch committed while it ran, the lease is kept an interval past
        this write, so that the batch's document rests before its next delivery's claim. A
        batch that defers tasks asks it: its remainder's delivery claimed the batch at once,
        and that claim and the remainder's end, on the heels of a commit and this write, took
        the document past one write a second (``make scale``, one host at 50 req/s: 135 batch
        documents at 1.1 to 1.3). A batch deferred before any commit (refused its host at
        once) gives it back: its document took only its claim, and a lease kept there held a
        tenant's one-page job back behind another's (bench T: 2.34 -> 3.61)."""
        if self._ticker is not None:
            self._ticker.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await self._ticker
        while True:
            try:
                rest_s = self._interval_s if rested and self._committed else 0.0
                await self._write(lease_until_s=rest_s)
                return
            except DependencyUnavailable:
                holds_results = any(isinstance(c, FinishTask) for c in self._pending)
                later = time.monotonic() + OUTAGE_RETRY_S
                if not holds_results or keep_trying_until is None or later > keep_trying_until:
                    raise
                log.warning("batch results not written yet: the store is not answering")
                await asyncio.sleep(OUTAGE_RETRY_S)

    async def _tick(self) -> None:
        renew_s = self._lease.total_seconds() / 3
        every_s = min(self._interval_s, renew_s)
        last_look = time.monotonic()
        while True:
            # at its time, not at the next of four looks an interval: polled so, a commit came
            # up to a quarter late or on time, and its gap could not be set to keep the
            # batch's document within its writes (the interval's setting)
            due = max(self._last_write, last_look) + every_s
            now = time.monotonic()
            if now < due:
                await asyncio.sleep(due - now)
                continue
            try:
                if self._pending or now - self._last_write >= renew_s:
                    await self._write(lease_until_s=self._lease.total_seconds())
                    self._committed = True
                else:  # nothing to record: a read for a cancel, no write
                    last_look = now
                    self.cancelled = self.cancelled or await self._store.cancel_heard(self._handle)
            except Exception:
                last_look = now  # again an interval on: tried at once, it hammered the store
                log.warning("batch commit or read failed; again at the next tick", exc_info=True)

    async def _write(self, lease_until_s: float) -> None:
        async with self._lock:
            changes, self._pending = self._pending, []
            now = self._clock()
            beat = self._heartbeat.take()
            try:
                settled: Settled = await self._store.settle(
                    self._handle, changes, now, now + timedelta(seconds=lease_until_s), beat
                )
            except BaseException:
                self._pending = changes + self._pending  # written by the next attempt
                if beat is not None:
                    self._heartbeat.restore(beat)
                raise
            self._heartbeat.finished(pages=len(settled.finished))
            self._last_write = time.monotonic()
            self._handle = settled.handle
            self.cancelled = self.cancelled or settled.cancelled
            self.job_may_be_done = self.job_may_be_done or settled.job_may_be_done
            self.job_completed = self.job_completed or settled.job_completed
            self.finished += len(settled.finished)
