"""In-memory AnswerCache (unit tests; the contract suite runs it beside Firestore's)."""

from __future__ import annotations

from datetime import datetime

from scrapejobs_shared.ports.answer_cache import CachedAnswer


class MemoryAnswerCache:
    def __init__(self) -> None:
        self.kept: dict[str, tuple[CachedAnswer, datetime]] = {}

    async def get(self, key: str, now: datetime) -> CachedAnswer | None:
        found = self.kept.get(key)
        return found[0] if found is not None and found[1] > now else None

    async def put(self, key: str, answer: CachedAnswer, expire_at: datetime) -> None:
        self.kept[key] = (answer, expire_at)
