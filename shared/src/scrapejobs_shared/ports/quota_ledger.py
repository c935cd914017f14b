"""A tenant's pages of a day, reserved as work is accepted, so that a daily quota holds
whatever the burst: the accepted pages never pass it, across every instance.

Invariants: ``reserve`` grants the reservations it is given in order, each only while the
day's reserved pages stay within ``limit``, all in one write; the same reservation granted
before (its key and pages, nothing given back nor settled: a submission retried) is granted
again without counting twice. A key held by another reservation (an id reused after its job
was cancelled and deleted, or for more pages) is a new reservation: counted anew, the old
one's pages not given back staying counted. ``release``
gives back what a reservation did not use, cumulatively: the most given back for it is what
counts, so calling it again (a cancel, then the job's end) never gives back twice; never more
than the reservation held; a ``final`` release settles the reservation (it is no longer
``unsettled``). A day's documents expire a few days after it.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from datetime import date
from typing import Protocol


@dataclass(frozen=True, slots=True)
class Reservation:
    key: str  # what the pages are reserved for: a job's id, a replay's own
    pages: int


class QuotaLedger(Protocol):
    async def reserve(
        self, tenant: str, day: date, wanted: Sequence[Reservation], limit: int
    ) -> list[bool]:
        """Whether each of ``wanted`` was granted (in order, within ``limit``)."""

    async def release(
        self, tenant: str, day: date, key: str, unused: int, final: bool = False
    ) -> None:
        """``key``'s reservation did not use ``unused`` of its pages (in all, so far);
        ``final``: nor will it (its work ended)."""

    async def unsettled(self, tenant: str, day: date, limit: int) -> list[str]:
        """Keys of the day's reservations not yet settled, at most ``limit``."""

    async def reserved(self, tenant: str, day: date) -> int:
        """The pages reserved on the tenant's ``day``, less what was given back."""
