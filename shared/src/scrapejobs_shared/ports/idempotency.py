"""The idempotency-key port: one job per key, whatever the number of concurrent or repeated
requests (IETF httpapi Idempotency-Key draft semantics).

``reserve`` is atomic: of concurrent requests with one key, exactly one gets ``Reserved`` and
runs the submission; the others see ``InFlight`` until it is ``complete``d (or released after a
failure), then ``Done`` with the job it created. A key reused with another request body is a
``Mismatch``. A reservation left ``InFlight`` by a dispatcher that died is taken over once it is
older than ``stale_after``. Keys expire (``expire_at``, Firestore TTL).
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Protocol


@dataclass(frozen=True, slots=True)
class Reserved:
    """This request runs the submission, then calls ``complete`` (or ``release``)."""


@dataclass(frozen=True, slots=True)
class InFlight:
    """Another request with this key is still running its submission."""


@dataclass(frozen=True, slots=True)
class Done:
    job_id: str


@dataclass(frozen=True, slots=True)
class Mismatch:
    """The key was used with another request body."""


Reservation = Reserved | InFlight | Done | Mismatch


class IdempotencyKeys(Protocol):
    async def reserve(
        self, key: str, fingerprint: str, now: datetime, expire_at: datetime, stale_after: timedelta
    ) -> Reservation: ...

    async def complete(self, key: str, job_id: str, now: datetime) -> None: ...

    async def release(self, key: str) -> None:
        """The reserved submission failed: the key may be used again."""
