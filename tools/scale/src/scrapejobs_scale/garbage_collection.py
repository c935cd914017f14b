"""The cyclic garbage collector's pace during a simulation.

A simulation allocates millions of short-lived objects (requests, records, parsed pages) beside
a large heap that lives for the whole run (every instance's app, the twins' documents). At
Python's default thresholds the collector ran after every 700 allocations and, with each
older generation it scanned, went through that heap again: 20% of a run's CPU (12.0 of 60.3 s
at a twentieth of many-hosts, 2,591 collections). At 50,000 it took 2.2 s (29 collections).
Only the simulation's process is tuned; the services' own settings are not touched.
"""

from __future__ import annotations

import gc
from collections.abc import Iterator
from contextlib import contextmanager

SIMULATION_THRESHOLDS = (50_000, 20, 100)  # allocations; collections of the younger generation


@contextmanager
def collected_less_often() -> Iterator[None]:
    """Collect at ``SIMULATION_THRESHOLDS`` for the duration, then as before."""
    before = gc.get_threshold()
    gc.set_threshold(*SIMULATION_THRESHOLDS)
    try:
        yield
    finally:
        gc.set_threshold(*before)
