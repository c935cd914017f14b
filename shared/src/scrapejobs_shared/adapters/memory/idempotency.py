"""In-memory idempotency keys with the Firestore adapter's semantics (for unit tests)."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime, timedelta

from scrapejobs_shared.ports.idempotency import (
    Done,
    InFlight,
    Mismatch,
    Reservation,
    Reserved,
)


@dataclass
class _Key:
    fingerprint: str
    reserved_at: datetime
    expire_at: datetime
    job_id: str | None = None


class MemoryIdempotencyKeys:
    def __init__(self) -> None:
        self.keys: dict[str, _Key] = {}

    async def reserve(
        self, key: str, fingerprint: str, now: datetime, expire_at: datetime, stale_after: timedelta
    ) -> Reservation:
        found = self.keys.get(key)
        if found is None or found.expire_at <= now:
            self.keys[key] = _Key(fingerprint, now, expire_at)
            return Reserved()
        if found.fingerprint != fingerprint:
            return Mismatch()
        if found.job_id is not None:
            return Done(found.job_id)
        if found.reserved_at > now - stale_after:
            return InFlight()
        found.reserved_at, found.expire_at = now, expire_at
        return Reserved()

    async def complete(self, key: str, job_id: str, now: datetime) -> None:
        self.keys[key].job_id = job_id

    async def release(self, key: str) -> None:
        self.keys.pop(key, None)
