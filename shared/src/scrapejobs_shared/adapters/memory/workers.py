"""The memory twin's ``WorkerDirectory`` (ports/workers.py): what the workers reported."""

from __future__ import annotations

from datetime import datetime

from scrapejobs_shared.adapters.memory.store_state import MemoryStoreState
from scrapejobs_shared.domain.workers import WorkerBeat, WorkerView


class MemoryWorkers:
    def __init__(self, state: MemoryStoreState) -> None:
        self._state = state

    async def report(self, beat: WorkerBeat) -> None:
        known = self._state.workers.get(beat.worker_id)
        self._state.workers[beat.worker_id] = WorkerView(
            worker_id=beat.worker_id,
            revision=beat.revision,
            started_at=beat.started_at,
            last_seen=beat.seen_at,
            batches=(known.batches if known else 0) + beat.batches,
            pages=(known.pages if known else 0) + beat.pages,
            batches_in_flight=beat.batches_in_flight,
            pages_in_flight=beat.pages_in_flight,
            proxies=beat.proxies,
        )

    async def seen_since(self, since: datetime, limit: int) -> list[WorkerView]:
        seen = [w for w in self._state.workers.values() if w.last_seen > since]
        return sorted(seen, key=lambda w: w.last_seen, reverse=True)[:limit]
