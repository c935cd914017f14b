"""What the dashboard shows, kept per instance for a few seconds, so its cost does not grow with
the tabs left open: every open tab polls every 5 seconds, and each page's figures (health,
throughput, the jobs with their counters, dead letters...) take tens to hundreds of Firestore
reads to compute.

A poll within ``fresh_s`` of the page's last computation is answered from here (no read); a
later one is answered from here too while a background task computes it again
(stale-while-revalidate, one computation at a time per page), so a poll never waits for
Firestore and never reads it itself. A page a person opens or reloads is computed in its
request (``compute``), so what they asked for is current.
At most ``max_pages`` pages are kept, the least recently shown dropped first."""

from __future__ import annotations

import asyncio
import contextvars
import logging
import time
from collections import OrderedDict
from collections.abc import Awaitable, Callable, Hashable
from typing import Any

log = logging.getLogger(__name__)

Context = dict[str, Any]


class FigureCache:
    def __init__(self, fresh_s: float = 5.0, max_pages: int = 256) -> None:
        self._fresh_s = fresh_s
        self._max_pages = max_pages
        self._pages: OrderedDict[Hashable, tuple[float, Context]] = OrderedDict()
        self._refreshing: dict[Hashable, asyncio.Task[None]] = {}

    async def get(self, key: Hashable, compute: Callable[[], Awaitable[Context]]) -> Context:
        """The page's figures; ``compute``'s exceptions (an unknown job, a bad page token)
        propagate when there is nothing to show instead."""
        kept = self._pages.get(key)
        if kept is None or self._fresh_s <= 0:
            return await self.compute(key, compute)
        self._pages.move_to_end(key)
        computed_at, context = kept
        if time.monotonic() - computed_at >= self._fresh_s and key not in self._refreshing:
            # its own context: the request's counters (reads per request) do not include it
            task = asyncio.create_task(self._refresh(key, compute), context=contextvars.Context())
            self._refreshing[key] = task
        return context

    def forget(self, key: Hashable) -> None:
        """After an action changed what the page shows (a replay)."""
        self._pages.pop(key, None)

    async def compute(self, key: Hashable, compute: Callable[[], Awaitable[Context]]) -> Context:
        """Compute the page now and keep it (a page a person opened or reloaded)."""
        context = await compute()
        self._pages[key] = (time.monotonic(), context)
        self._pages.move_to_end(key)
        while len(self._pages) > self._max_pages:
            self._pages.popitem(last=False)
        return context

    async def _refresh(self, key: Hashable, compute: Callable[[], Awaitable[Context]]) -> None:
        try:
            await self.compute(key, compute)
        except Exception:  # the next poll computes it in its request and shows what went wrong
            self._pages.pop(key, None)
            log.warning("dashboard figures not refreshed", extra={"page": str(key)}, exc_info=True)
        finally:
            self._refreshing.pop(key, None)
