"""In-memory PageCache (unit tests; the contract suite runs it beside Firestore's)."""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from datetime import datetime

from scrapejobs_shared.ports.page_cache import MAX_DATA_CHARS, CachedPage


class MemoryPageCache:
    def __init__(self) -> None:
        self.kept: dict[str, CachedPage] = {}
        self.reads = 0  # get_many calls
        self.writes = 0  # put_many calls

    async def get_many(self, keys: Sequence[str], fetched_after: datetime) -> dict[str, CachedPage]:
        self.reads += 1
        found = {key: self.kept[key] for key in keys if key in self.kept}
        return {key: page for key, page in found.items() if page.fetched_at > fetched_after}

    async def put_many(self, pages: Mapping[str, CachedPage], expire_at: datetime) -> None:
        self.writes += 1
        for key, page in pages.items():
            if len(json.dumps(page.data, separators=(",", ":"))) <= MAX_DATA_CHARS:
                self.kept[key] = page  # as on Firestore: a page over a document's size is not kept
