"""API keys kept in the store: created and revoked at run time, checked on every instance.

A key is never stored: only its SHA-256 digest (keys carry 256 random bits, so a fast,
unsalted digest cannot be turned back into one), with the key's id, tenant, role and name.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Protocol

from scrapejobs_shared.domain.tenancy import Role


@dataclass(frozen=True, slots=True)
class ApiKeyRecord:
    id: str  # public: how the key is listed and revoked
    digest: str  # SHA-256 hex of the key
    tenant: str
    role: Role
    name: str
    created_at: datetime
    last_used_at: datetime | None = None


class ApiKeyStore(Protocol):
    async def add(self, record: ApiKeyRecord) -> None:
        """Keep a new key (its digest and id are new: both are random)."""

    async def by_digest(self, digest: str) -> ApiKeyRecord | None:
        """The live key with this digest (one document read)."""

    async def by_id(self, key_id: str) -> ApiKeyRecord | None: ...

    async def listed(self, tenant: str | None, limit: int) -> Sequence[ApiKeyRecord]:
        """Keys (of ``tenant``, else every tenant's), newest first, at most ``limit``."""

    async def remove(self, key_id: str) -> bool:
        """Revoke: the key is gone from the store; False when there was no such key."""

    async def used(self, digest: str, at: datetime) -> None:
        """Note when the key was last used (callers write it at most about once an hour)."""
