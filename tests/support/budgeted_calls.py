"""Module-level calls the budgeted-work contract tests send to another process."""

from __future__ import annotations

import time

from scrapejobs_shared.errors import InvalidInput


def add(a: int, b: int) -> int:
    return a + b


def refuse(text: str) -> None:
    raise InvalidInput(text)


def spin(seconds: float) -> int:
    """CPU for ``seconds`` (the tests give a smaller budget)."""
    end = time.process_time() + seconds
    turns = 0
    while time.process_time() < end:
        turns += 1
    return turns


def hoard(mib: int) -> int:
    kept = [bytearray(1 << 20) for _ in range(mib)]
    return len(kept)


def large(mib: int) -> bytes:
    return b"x" * (mib << 20)


def sleep(seconds: float) -> None:
    time.sleep(seconds)
