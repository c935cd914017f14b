"""The simulated clock: an hour of sleeping passes at once, and every clock the services read
follows it; a thread's work is waited for with the clock stopped."""

from __future__ import annotations

import asyncio
import time
from datetime import UTC, datetime, timedelta

from scrapejobs_scale.virtual_clock import START, VirtualClock

from .simulated import simulated


def real_wait(clock: VirtualClock) -> float:
    time.sleep(0.05)
    return clock.now_s


def test_sleeping_timeouts_and_every_clock_follow_the_simulated_one() -> None:
    async def main(clock: VirtualClock) -> tuple[float, float, timedelta, float, bool]:
        wall, began = time.perf_counter(), time.monotonic()
        await asyncio.sleep(3600)
        timed_out = False
        try:
            async with asyncio.timeout(5):
                await asyncio.sleep(60)
        except TimeoutError:
            timed_out = True
        waited = await asyncio.to_thread(real_wait, clock)
        return (
            time.monotonic() - began,
            clock.now_s - waited,
            datetime.now(UTC) - START,
            time.perf_counter() - wall,
            timed_out,
        )

    monotonic, during_thread, wall_clock, real_s, timed_out = simulated(main)
    assert monotonic == 3605.0 and wall_clock == timedelta(seconds=3605)
    assert during_thread == 0.0  # the thread's real 50 ms took no simulated time
    assert timed_out and real_s < 10
    assert abs(time.time() - datetime.now(UTC).timestamp()) < 5  # real again after the run
