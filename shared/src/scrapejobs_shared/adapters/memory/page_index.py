"""The memory twin's ``PageCache`` (ports/page_cache.py): the entries the settles kept."""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime

from scrapejobs_shared.adapters.memory.store_state import MemoryStoreState
from scrapejobs_shared.ports.page_cache import KeptPage


class MemoryPageIndex:
    def __init__(self, state: MemoryStoreState) -> None:
        self._state = state

    async def get_many(self, keys: Sequence[str], fetched_after: datetime) -> dict[str, KeptPage]:
        self._state.page_cache_reads += 1
        kept = self._state.kept_pages
        found = {key: kept[key] for key in keys if key in kept}
        return {key: page for key, page in found.items() if page.fetched_at > fetched_after}
