"""A process's outcome totals, put when due (``StatsWriter``: ports/outcome_stats.py).

Each settle's outcomes are added here once its commit landed. The buffer puts the process's
totals of each tenant's 5-minute slot, whole (never an increment), on a document of its own
(its ``source``): while batches run, at most once every ``every_s``; when a batch ends, at once
while the process has puts in hand (``BURST``, one more every ``every_s``), else on a timer at
the next one. So a statistics document takes at most one write every ``every_s`` sustained, in
bursts of a few (Firestore's ~1 sustained write a second a document, and its burst allowance),
however many batches a process runs: the writes grow with the processes, not with the settles
(docs/scale.md).

A batch's last settle puts at once while a put is in hand (``record(..., ends=True)``): then a
job's totals are stored by the time its batches' settles return (a job of batches completes
after them; a job that holds its one batch, in that settle's commit, a moment before). A settle
never waits for a put's turn: past the burst, the put comes on a timer within ``every_s`` (on
Cloud Run, an instance between requests runs it at throttled CPU). A put that fails is logged
and sent again with the next (a put sent twice leaves the same figures). What a process had not
put when it died (its last ``every_s`` at most; the services put what is left when they stop)
is missing: the figures can come short, never doubled.
"""

from __future__ import annotations

import asyncio
import logging
import time
import uuid
from datetime import datetime, timedelta

from scrapejobs_shared.domain.outcome_stats import Totals, slot_of
from scrapejobs_shared.ports.outcome_stats import SourceTotals, StatsWriter

log = logging.getLogger(__name__)

# puts a process may make at once (batches that end together): in any 10 s a document takes at
# most BURST + 10 s / every_s puts, 9 or 10 at the default 1.5 s; at 5 and 1 s, 15 (``make
# scale``: the million URLs' 200 statistics documents at 1.40 writes a second over their
# busiest 10 s). At 2 in hand, a batch's end that came just after a timer's put often found
# none, and its job's statistics came a turn later (an e2e test read them short)
BURST = 3
# a turn this close is taken now: a wait computed after sleeping the last one can come out a
# rounding error above zero, and on a simulated clock (make scale) sleeping that moves no time
TURN_SLACK_S = 0.001
KEEP = timedelta(minutes=15)  # slots this much older than the newest are let go once put
Key = tuple[datetime, str]  # (slot, tenant)


class StatsBuffer:
    def __init__(self, writer: StatsWriter, every_s: float = 1.5, source: str = "") -> None:
        self._writer = writer
        self._every_s = every_s
        self.source = source or uuid.uuid4().hex
        self._totals: dict[Key, Totals] = {}
        self._dirty: set[Key] = set()
        # a slot let go that is added to again (a settle stamped late) starts a source of its
        # own: its first document already holds what was put before
        self._late_sources: dict[Key, str] = {}
        self._horizon: datetime | None = None  # slots before it were let go
        self._last_put = float("-inf")  # time.monotonic() of the last put
        self._in_hand = float(BURST)  # puts the process may make now
        self._counted_at = time.monotonic()
        self._lock = asyncio.Lock()
        self._timer: asyncio.Task[None] | None = None

    def add(self, tenant: str, at: datetime, totals: Totals) -> None:
        if totals.empty:
            return
        key = (slot_of(at), tenant)
        if key not in self._totals and self._horizon is not None and key[0] < self._horizon:
            self._late_sources[key] = uuid.uuid4().hex
        self._totals[key] = self._totals.get(key, Totals()) + totals
        self._dirty.add(key)

    async def record(self, tenant: str, at: datetime, totals: Totals, *, ends: bool) -> None:
        """``totals`` of ``tenant``'s outcomes at ``at`` added. A batch's end (``ends``) puts
        before this returns while a put is in hand; otherwise the put comes on a timer, at the
        next turn. Never waits for a turn: a settle is never held back."""
        self.add(tenant, at, totals)
        if not self._dirty:
            return
        if (ends or self._every_s <= 0) and self._no_put_for() <= TURN_SLACK_S:  # 0: always
            async with self._lock:  # batches that end together: one put, after the one going
                if self._dirty and self._no_put_for() <= TURN_SLACK_S:
                    await self._put()
        if self._dirty and (self._timer is None or self._timer.done()):
            self._timer = asyncio.get_running_loop().create_task(self.flush())

    async def flush(self) -> None:
        """Put what was added, at its turn: ``every_s`` after the last put, with a put in
        hand (waiting outside the lock, so a batch's end is never held behind it); returns
        once it is put (or its put failed)."""
        while True:
            async with self._lock:  # a put going ends first
                if not self._dirty:
                    return
                wait = max(self._due_in(), self._no_put_for())
                if wait <= TURN_SLACK_S:
                    await self._put()
                    return
            await asyncio.sleep(wait)

    async def aclose(self) -> None:
        """Put what is left at once (a process that stops)."""
        if self._timer is not None:
            self._timer.cancel()
        async with self._lock:
            if self._dirty:
                await self._put()

    def _due_in(self) -> float:
        """Seconds until a running batch's outcomes are due."""
        return self._last_put + self._every_s - time.monotonic()

    def _no_put_for(self) -> float:
        """Seconds until the process has a put in hand (one more every ``every_s``)."""
        if self._every_s <= 0:
            return 0.0
        now = time.monotonic()
        earned = (now - self._counted_at) / self._every_s
        self._in_hand, self._counted_at = min(float(BURST), self._in_hand + earned), now
        return max(0.0, (1 - self._in_hand) * self._every_s)

    async def _put(self) -> None:
        keys = list(self._dirty)
        self._dirty.clear()
        self._last_put = time.monotonic()
        self._in_hand -= 1
        by_source: dict[str, list[SourceTotals]] = {}
        for key in keys:
            source = self._late_sources.get(key, self.source)
            by_source.setdefault(source, []).append(SourceTotals(*key, self._totals[key]))
        try:
            for source, entries in by_source.items():
                await self._writer.put(source, entries)
        except Exception:  # the commits they came with landed: put them again with the next
            self._dirty.update(keys)
            log.warning("outcome statistics not written; kept for the next put", exc_info=True)
            return
        self._let_go()

    def _let_go(self) -> None:
        """Forget the slots long past (their totals are put)."""
        horizon = max(slot for slot, _ in self._totals) - KEEP
        for key in [k for k in self._totals if k[0] < horizon and k not in self._dirty]:
            del self._totals[key]
            self._late_sources.pop(key, None)
        self._horizon = horizon if self._horizon is None else max(self._horizon, horizon)
