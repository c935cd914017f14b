"""Where worker processes report themselves and where they are listed (the workers view).
Reports ride along with the batch commits a worker makes anyway (``BatchStore.settle``'s
``beat``); ``report`` is for the rest: a process starting, counts left over after its last
commit, an idle process saying it is alive."""

from __future__ import annotations

from datetime import datetime
from typing import Protocol

from scrapejobs_shared.domain.workers import WorkerBeat, WorkerView


class WorkerDirectory(Protocol):
    async def report(self, beat: WorkerBeat) -> None:
        """Record ``beat`` on its own (one write)."""

    async def seen_since(self, since: datetime, limit: int) -> list[WorkerView]:
        """Workers last heard from after ``since``, the most recently heard first."""
