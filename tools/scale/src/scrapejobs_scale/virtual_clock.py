"""A simulated clock: an event loop whose time jumps to its next timer whenever nothing is ready,
so an hour of sleeping, pacing and lease expiry takes only the CPU its work needs.

Everything the services read time from follows it: the loop's ``time()`` (``asyncio.sleep``,
timeouts), ``time.monotonic()`` (patched for the run), and ``time.time()`` and
``datetime.now()`` (time-machine). Work handed to a thread (``asyncio.to_thread``) is waited
for in real time with the clock stopped, as if it took no simulated time; so is any real I/O.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import selectors
import time
from collections.abc import Callable, Coroutine
from datetime import UTC, datetime, timedelta
from typing import Any, TypeVar

import time_machine

T = TypeVar("T")
START = datetime(2026, 6, 1, tzinfo=UTC)
IDLE_POLL_S = 0.001  # a real wait for a thread's answer, the clock stopped


class VirtualClock:
    """Seconds since the run began (``now_s``) and the wall time they make."""

    def __init__(self, start: datetime = START) -> None:
        self.start = start
        self.now_s = 0.0
        self._traveller: time_machine.Traveller | None = None

    def monotonic(self) -> float:
        return self.now_s

    def utc(self) -> datetime:
        return self.start + timedelta(seconds=self.now_s)

    def advance(self, seconds: float) -> None:
        if seconds <= 0:
            return
        self.now_s += seconds
        if self._traveller is not None:
            self._traveller.shift(seconds)


class _Selector(selectors.DefaultSelector):
    """Polls real I/O without waiting; when nothing is ready and no thread is working, the
    wait the loop asked for passes on the clock instead."""

    def __init__(self, clock: VirtualClock, busy: Callable[[], int]) -> None:
        super().__init__()
        self._clock = clock
        self._busy = busy

    def select(self, timeout: float | None = None) -> list[Any]:
        ready: list[Any] = super().select(0)
        if ready or timeout == 0:
            return ready
        if self._busy():
            return list(super().select(IDLE_POLL_S if timeout is None else min(timeout, 0.05)))
        if timeout is None:
            return list(super().select(IDLE_POLL_S))  # nothing scheduled: only I/O can come
        self._clock.advance(timeout)
        return []


class SimulatedLoop(asyncio.SelectorEventLoop):
    def __init__(self, clock: VirtualClock) -> None:
        self._threads = 0
        super().__init__(selector=_Selector(clock, lambda: self._threads))
        self._clock = clock

    def time(self) -> float:
        return self._clock.now_s

    def run_in_executor(  # type: ignore[override]
        self, executor: concurrent.futures.Executor | None, func: Callable[..., T], *args: Any
    ) -> asyncio.Future[T]:
        future = super().run_in_executor(executor, func, *args)
        self._threads += 1
        future.add_done_callback(self._thread_done)
        return future

    def _thread_done(self, _: object) -> None:
        self._threads -= 1


def run_simulated(main: Coroutine[Any, Any, T], clock: VirtualClock) -> T:
    """Run ``main`` to its end on ``clock``: the wall clock, ``time.time()`` and
    ``time.monotonic()`` follow it for the duration, and are real again after."""
    loop = SimulatedLoop(clock)
    travel = time_machine.travel(clock.utc(), tick=False)
    real_monotonic = time.monotonic
    clock._traveller = travel.start()
    time.monotonic = clock.monotonic
    try:
        asyncio.set_event_loop(loop)
        return loop.run_until_complete(main)
    finally:
        _cancel_the_rest(loop)
        time.monotonic = real_monotonic
        travel.stop()
        clock._traveller = None
        asyncio.set_event_loop(None)
        loop.close()


def _cancel_the_rest(loop: asyncio.AbstractEventLoop) -> None:
    """What is still running ends here, cancelled, while its loop still runs (as asyncio.run
    ends its tasks): a task left to the garbage collector would run its cleanup on no loop."""
    tasks = [task for task in asyncio.all_tasks(loop) if not task.done()]
    for task in tasks:
        task.cancel()
    if tasks:
        loop.run_until_complete(asyncio.gather(*tasks, return_exceptions=True))
    loop.run_until_complete(loop.shutdown_asyncgens())
