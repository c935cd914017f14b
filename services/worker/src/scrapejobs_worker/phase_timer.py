"""Wall time per processing phase of one task, for the ``task processed`` log line.

The timer of the task being processed lives in a context variable: each push request runs in
its own asyncio task (its own context), so concurrent requests never mix their timings.
"""

from __future__ import annotations

import time
from collections.abc import Iterator
from contextlib import contextmanager
from contextvars import ContextVar

_current: ContextVar[dict[str, float] | None] = ContextVar("phase_timings", default=None)


@contextmanager
def collect_phases() -> Iterator[dict[str, float]]:
    """Collect ``<phase>_ms`` timings of everything ``phase`` measures inside the block."""
    timings: dict[str, float] = {}
    token = _current.set(timings)
    try:
        yield timings
    finally:
        _current.reset(token)


@contextmanager
def phase(name: str) -> Iterator[None]:
    started = time.perf_counter()
    try:
        yield
    finally:
        timings = _current.get()
        if timings is not None:
            key = f"{name}_ms"
            timings[key] = round(timings.get(key, 0.0) + (time.perf_counter() - started) * 1000, 1)
