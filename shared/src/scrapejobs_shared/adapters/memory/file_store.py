"""In-memory FileStore (unit tests; the contract suite runs it beside Cloud Storage's)."""

from __future__ import annotations

from datetime import datetime

from scrapejobs_shared.ports.file_store import StoredFile


class MemoryFileStore:
    def __init__(self) -> None:
        self.kept: dict[str, tuple[StoredFile, datetime]] = {}

    async def put(self, key: str, body: bytes, content_type: str, expire_at: datetime) -> None:
        self.kept[key] = (StoredFile(body, content_type), expire_at)

    async def get(self, key: str, now: datetime) -> StoredFile | None:
        found = self.kept.get(key)
        return found[0] if found is not None and found[1] > now else None
