"""In-memory AnswerCache (unit tests; the contract suite runs it beside Firestore's)."""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime

from scrapejobs_shared.ports.answer_cache import CachedAnswer


class MemoryAnswerCache:
    def __init__(self) -> None:
        self.kept: dict[str, tuple[CachedAnswer, datetime]] = {}

    async def get_many(self, keys: Sequence[str], now: datetime) -> dict[str, CachedAnswer]:
        found = {key: self.kept[key] for key in keys if key in self.kept}
        return {key: answer for key, (answer, expire_at) in found.items() if expire_at > now}

    async def put(self, key: str, answer: CachedAnswer, expire_at: datetime) -> None:
        self.kept[key] = (answer, expire_at)
