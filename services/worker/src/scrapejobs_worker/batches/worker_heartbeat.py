"""This worker process's reports for the workers view (``GET /v1/workers``).

A report rides along with a batch commit the process makes anyway (``take`` before the
commit, ``restore`` if it failed) at most once every ``every_s``, so the process's document
takes about one write a second however many pages it fetches. What no commit carried (the
counts of the last commits before the process went quiet, a change of what it has in hand)
and, when idle, a sign of life every ``alive_every_s`` are reported on their own by ``run``.
Counts are what the process finished since its previous report: the store adds them up, and
a failed write gives them back, so the totals are exact. Without a directory (tests over
in-memory stores that do not list workers) it counts and reports nothing."""

from __future__ import annotations

import asyncio
import logging
import os
import socket
import time
import uuid
from collections.abc import Callable

from scrapejobs_shared.domain.clock import Clock
from scrapejobs_shared.domain.workers import ProxyUse, WorkerBeat
from scrapejobs_shared.ports.workers import WorkerDirectory

log = logging.getLogger(__name__)


def new_worker_id() -> str:
    """Unique per process: the host, the pid, and a random part (pids repeat in containers)."""
    host = socket.gethostname().split(".")[0][:40] or "worker"
    return f"{host}-{os.getpid()}-{uuid.uuid4().hex[:6]}"


class WorkerHeartbeat:
    def __init__(
        self,
        directory: WorkerDirectory | None,
        clock: Clock,
        revision: str,
        *,
        every_s: float = 1.0,
        alive_every_s: float = 60.0,
        proxies: Callable[[], tuple[ProxyUse, ...]] = tuple,
    ) -> None:
        """``proxies``: how the process's proxies served it so far (the fetcher's counts)."""
        self._directory = directory
        self._clock = clock
        self.worker_id = new_worker_id()
        self._revision = revision
        self._started_at = clock()
        self._every_s = every_s
        self._alive_every_s = alive_every_s
        self._proxies = proxies
        self._batches = 0  # finished and not reported yet
        self._pages = 0
        self.batches_in_flight = 0
        self.pages_in_flight = 0
        self._last = float("-inf")  # time.monotonic() of the last report
        self._reported_in_flight = (-1, -1)

    def finished(self, *, batches: int = 0, pages: int = 0) -> None:
        self._batches += batches
        self._pages += pages

    def take(self) -> WorkerBeat | None:
        """A report for the commit about to be made, when one is due; its counts are now the
        commit's (``restore`` them if it fails)."""
        if self._directory is None or time.monotonic() - self._last < self._every_s:
            return None
        beat = WorkerBeat(
            worker_id=self.worker_id,
            revision=self._revision,
            started_at=self._started_at,
            seen_at=self._clock(),
            batches=self._batches,
            pages=self._pages,
            batches_in_flight=self.batches_in_flight,
            pages_in_flight=self.pages_in_flight,
            proxies=self._proxies(),
        )
        self._batches = self._pages = 0
        self._last = time.monotonic()
        self._reported_in_flight = (beat.batches_in_flight, beat.pages_in_flight)
        return beat

    def restore(self, beat: WorkerBeat) -> None:
        """The commit carrying ``beat`` failed: its counts go into the next report."""
        self._batches += beat.batches
        self._pages += beat.pages
        self._last = float("-inf")

    async def report_now(self) -> None:
        """A report on its own (the process starting, or what no commit carried)."""
        self._last = float("-inf")
        beat = self.take()
        if beat is None or self._directory is None:
            return
        try:
            await self._directory.report(beat)
        except Exception:
            self.restore(beat)
            raise

    def _owes_a_report(self) -> bool:
        in_flight = (self.batches_in_flight, self.pages_in_flight)
        quiet_s = time.monotonic() - self._last
        if quiet_s >= self._alive_every_s:
            return True
        unsaid = self._batches or self._pages or in_flight != self._reported_in_flight
        return bool(unsaid) and quiet_s >= self._every_s

    async def run(self) -> None:
        """Until cancelled: what no commit carried, reported within about ``every_s``."""
        while self._directory is not None:
            await asyncio.sleep(self._every_s)
            if not self._owes_a_report():
                continue
            try:
                await self.report_now()
            except Exception:
                log.warning("worker report failed; trying again shortly", exc_info=True)
