"""Dashboard sessions ended before their time: a signed-out session's id is kept until the
session would have expired anyway, and every instance refuses it from then on."""

from __future__ import annotations

from datetime import datetime
from typing import Protocol


class SessionRevocations(Protocol):
    async def revoke(self, session_id: str, until: datetime) -> None:
        """End ``session_id``; it is remembered until ``until`` (its own expiry)."""

    async def revoked(self, session_id: str, now: datetime) -> bool:
        """Whether ``session_id`` was ended (and its record has not lapsed at ``now``)."""
