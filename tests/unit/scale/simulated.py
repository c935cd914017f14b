"""Run a coroutine on the simulated clock, in a thread of its own (the suite's event loop
stays as it is)."""

from __future__ import annotations

from collections.abc import Callable, Coroutine
from concurrent.futures import ThreadPoolExecutor
from typing import Any, TypeVar

from scrapejobs_scale.virtual_clock import VirtualClock, run_simulated

T = TypeVar("T")


def simulated(main: Callable[[VirtualClock], Coroutine[Any, Any, T]]) -> T:
    clock = VirtualClock()
    with ThreadPoolExecutor(1) as pool:
        return pool.submit(run_simulated, main(clock), clock).result(timeout=240)
