"""Counting Firestore document reads and writes per unit of work (a batch, a submission).

Adapters call ``count(reads=..., writes=...)``; a caller that wants the figures wraps its work
in ``counting()``, whose counter every coroutine and task started inside it shares (a context
variable). Outside ``counting()`` nothing is recorded. Billing counts documents, so do we: a
batched get of n documents is n reads, a commit of n writes is n writes.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from dataclasses import dataclass


@dataclass
class StoreOps:
    reads: int = 0
    writes: int = 0


_current: ContextVar[StoreOps | None] = ContextVar("scrapejobs_store_ops", default=None)


def count(reads: int = 0, writes: int = 0) -> None:
    ops = _current.get()
    if ops is not None:
        ops.reads += reads
        ops.writes += writes


@contextmanager
def counting() -> Iterator[StoreOps]:
    ops = StoreOps()
    token = _current.set(ops)
    try:
        yield ops
    finally:
        _current.reset(token)
