"""In-memory ApiKeyStore (unit tests; the contract suite runs it beside Firestore's)."""

from __future__ import annotations

from dataclasses import replace
from datetime import datetime

from scrapejobs_shared.ports.api_keys import ApiKeyRecord


class MemoryApiKeyStore:
    def __init__(self) -> None:
        self.keys: dict[str, ApiKeyRecord] = {}  # digest -> record

    async def add(self, record: ApiKeyRecord) -> None:
        self.keys[record.digest] = record

    async def by_digest(self, digest: str) -> ApiKeyRecord | None:
        return self.keys.get(digest)

    async def by_id(self, key_id: str) -> ApiKeyRecord | None:
        return next((k for k in self.keys.values() if k.id == key_id), None)

    async def listed(self, tenant: str | None, limit: int) -> list[ApiKeyRecord]:
        kept = [k for k in self.keys.values() if tenant is None or k.tenant == tenant]
        return sorted(kept, key=lambda k: (k.created_at, k.id), reverse=True)[:limit]

    async def remove(self, key_id: str) -> bool:
        found = await self.by_id(key_id)
        if found is None:
            return False
        del self.keys[found.digest]
        return True

    async def used(self, digest: str, at: datetime) -> None:
        if digest in self.keys:
            self.keys[digest] = replace(self.keys[digest], last_used_at=at)
