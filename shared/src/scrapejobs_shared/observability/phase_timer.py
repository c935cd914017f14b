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


class _Phase:
    """A class, not a generator context manager: it runs a few times per page."""

    __slots__ = ("_key", "_started")

    def __init__(self, name: str) -> None:
        self._key = f"{name}_ms"
        self._started = 0.0

    def __enter__(self) -> None:
        self._started = time.perf_counter()

    def __exit__(self, *exc_info: object) -> None:
        timings = _current.get()
        if timings is not None:
            elapsed_ms = (time.perf_counter() - self._started) * 1000
            timings[self._key] = round(timings.get(self._key, 0.0) + elapsed_ms, 1)


def phase(name: str) -> _Phase:
    """Add the wall time of the block to ``<name>_ms`` of the timings being collected."""
    return _Phase(name)
