"""In-memory SessionRevocations (unit tests; the contract suite runs it beside Firestore's)."""

from __future__ import annotations

from datetime import datetime


class MemorySessionRevocations:
    def __init__(self) -> None:
        self.ended: dict[str, datetime] = {}

    async def revoke(self, session_id: str, until: datetime) -> None:
        self.ended[session_id] = until

    async def revoked(self, session_id: str, now: datetime) -> bool:
        until = self.ended.get(session_id)
        return until is not None and until > now
