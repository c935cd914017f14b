"""Documents yield the CPU to pages: while pages are being extracted, the processes reading
documents are paused (``SIGSTOP``) but for a share of each period (``SIGCONT``), and run freely
once pages have been quiet a moment.

The idle scheduling policy the documents' processes run at (processes/limits.py) gives pages
the cores first, yet on this 2-vCPU machine a page job's pages/s fell to 0.76 of its pages/s
alone beside two idle-priority busy loops, and to 0.56 beside a scan read by OCR
(bench/README.md, D and O): the policy decides who runs, not what a thread running beside the
page's costs it (the caches and the memory bandwidth two vCPUs share, OCR's working set more
than a busy loop's). Only not running beside pages spares them; a share of each period keeps
documents going under a steady flow of pages, as a document's read must end (its CPU budget is
CPU time: paused, it spends none). A paused process is continued before its answer is read
(ExtractionProcesses ``pausable``): the worker reads an answer whole, and a paused writer
would hold the event loop, this gate's included.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import signal
from collections.abc import Callable

PERIOD_S = 0.5  # while pages flow: documents paused for (1 - SHARE) of each period
SHARE = 0.2  # of each period documents run while pages flow
QUIET_S = 0.3  # pages not extracted for this long: documents run freely
IDLE_POLL_S = 0.05  # how often a gate with documents running looks for pages


class DocumentsYield:
    """Pauses the processes ``working()`` names (documents being read) while pages are
    extracted (:meth:`page_started`, :meth:`page_ended`), but for :data:`SHARE` of each
    :data:`PERIOD_S`."""

    def __init__(self, working: Callable[[], list[int]]) -> None:
        self._working = working
        self._pages = 0  # being extracted now
        self._last_page = 0.0  # loop time the last one ended
        self._paused: set[int] = set()
        self._task: asyncio.Task[None] | None = None

    def start(self) -> None:
        if self._task is None:
            self._task = asyncio.get_running_loop().create_task(self._run())

    async def close(self) -> None:
        if self._task is not None:
            self._task.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await self._task
            self._task = None
        self._resume()

    def page_started(self) -> None:
        self._pages += 1

    def page_ended(self) -> None:
        self._pages -= 1
        self._last_page = asyncio.get_running_loop().time()

    def pages_flowing(self) -> bool:
        now = asyncio.get_running_loop().time()
        return self._pages > 0 or now - self._last_page < QUIET_S

    async def _run(self) -> None:
        try:
            while True:
                if self.pages_flowing() and self._working():
                    self._pause()
                    await asyncio.sleep(PERIOD_S * (1 - SHARE))
                    self._resume()
                    await asyncio.sleep(PERIOD_S * SHARE)
                else:
                    self._resume()
                    await asyncio.sleep(IDLE_POLL_S)
        finally:
            self._resume()

    def _pause(self) -> None:
        for pid in self._working():
            if _signal(pid, signal.SIGSTOP):
                self._paused.add(pid)

    def _resume(self) -> None:
        for pid in self._paused:
            _signal(pid, signal.SIGCONT)
        self._paused.clear()


def _signal(pid: int, signum: signal.Signals) -> bool:
    """``signum`` sent to ``pid``, a process of ours (False: it has ended)."""
    try:
        os.kill(pid, signum)
    except ProcessLookupError:
        return False
    return True
