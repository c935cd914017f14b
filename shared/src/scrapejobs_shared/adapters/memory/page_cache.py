"""In-memory PageCache (unit tests; the contract suite runs it beside Firestore's)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from datetime import datetime

from scrapejobs_shared.ports.page_cache import KeptPage


class MemoryPageCache:
    def __init__(self) -> None:
        self.kept: dict[str, KeptPage] = {}
        self.reads = 0  # get_many calls
        self.writes = 0  # put_many calls

    async def get_many(self, keys: Sequence[str], fetched_after: datetime) -> dict[str, KeptPage]:
        self.reads += 1
        found = {key: self.kept[key] for key in keys if key in self.kept}
        return {key: page for key, page in found.items() if page.fetched_at > fetched_after}

    async def put_many(self, pages: Mapping[str, KeptPage], expire_at: datetime) -> None:
        self.writes += 1
        self.kept.update(pages)
