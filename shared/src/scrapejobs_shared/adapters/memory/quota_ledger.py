"""In-memory QuotaLedger (unit tests; the contract suite runs it beside Firestore's)."""

from __future__ import annotations

from collections.abc import Sequence
from datetime import date

from scrapejobs_shared.ports.quota_ledger import Reservation


class MemoryQuotaLedger:
    def __init__(self) -> None:
        self.days: dict[tuple[str, date], int] = {}
        self.held: dict[tuple[str, date, str], tuple[int, int]] = {}  # pages, released
        self.settled: set[tuple[str, date, str]] = set()
        self.writes = 0

    async def reserve(
        self, tenant: str, day: date, wanted: Sequence[Reservation], limit: int
    ) -> list[bool]:
        self.writes += 1
        reserved = self.days.get((tenant, day), 0)
        granted: list[bool] = []
        for reservation in wanted:
            key = (tenant, day, reservation.key)
            if self.held.get(key) == (reservation.pages, 0) and key not in self.settled:
                granted.append(True)  # the same reservation, retried
            elif reserved + reservation.pages <= limit:
                reserved += reservation.pages
                self.held[key] = (reservation.pages, 0)
                self.settled.discard(key)
                granted.append(True)
            else:
                granted.append(False)
        self.days[(tenant, day)] = reserved
        return granted

    async def release(
        self, tenant: str, day: date, key: str, unused: int, final: bool = False
    ) -> None:
        held = self.held.get((tenant, day, key))
        if held is None:
            return
        if final:
            self.settled.add((tenant, day, key))
        pages, released = held
        now = min(max(unused, released), pages)
        self.held[(tenant, day, key)] = (pages, now)
        self.days[(tenant, day)] -= now - released

    async def unsettled(self, tenant: str, day: date, limit: int) -> list[str]:
        keys = [k for (t, d, k) in self.held if (t, d) == (tenant, day)]
        return [k for k in keys if (tenant, day, k) not in self.settled][:limit]

    async def reserved(self, tenant: str, day: date) -> int:
        return self.days.get((tenant, day), 0)
