"""Whether the event loop kept turning while work ran: a 10 ms timer counted."""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import AsyncIterator
from dataclasses import dataclass


@dataclass
class Ticks:
    count: int = 0


@contextlib.asynccontextmanager
async def ticking(every_s: float = 0.01) -> AsyncIterator[Ticks]:
    """A timer every ``every_s`` on the loop, counted in the answer while the block runs
    (100 a second when the loop is free)."""
    ticks = Ticks()

    async def tick() -> None:
        while True:
            await asyncio.sleep(every_s)
            ticks.count += 1

    ticker = asyncio.create_task(tick())
    try:
        yield ticks
    finally:
        ticker.cancel()
        with contextlib.suppress(asyncio.CancelledError):
            await ticker
