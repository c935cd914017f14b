"""Where monitors are kept: one record per monitor, seen only by its tenant.

Invariants: a monitor is found only under its own tenant (another team's id is not found);
``save`` replaces a monitor only when it is unchanged since the ``updated_at`` the caller read
(``False`` otherwise: read again and decide again), so two edits never lose one another;
``due`` answers active monitors whose next check time has come, soonest first, one query
however many monitors there are (or one tenant's). ``create`` holds a tenant's cap whatever
the burst: of parallel creates, those past ``limit`` are refused, however many instances take
them; a deletion frees its place.
"""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime
from typing import Protocol

from scrapejobs_shared.domain.monitors import MonitorRecord


class MonitorStore(Protocol):
    async def create(self, record: MonitorRecord, limit: int) -> bool:
        """Keep a new monitor (its id is new: random) unless its tenant keeps ``limit``
        already; whether it did."""

    async def get(self, tenant: str, monitor_id: str) -> MonitorRecord | None: ...

    async def listed(
        self, tenant: str, limit: int, after: str | None = None
    ) -> tuple[Sequence[MonitorRecord], str | None]:
        """The tenant's monitors, newest first, at most ``limit``, from the page token
        ``after``; and the next page's token (None on the last page)."""

    async def count_of(self, tenant: str) -> int:
        """How many monitors the tenant keeps (one aggregation, not a read of each)."""

    async def save(self, record: MonitorRecord, read_at: datetime) -> bool:
        """Replace the monitor if its ``updated_at`` is still ``read_at``; whether it did."""

    async def delete(self, tenant: str, monitor_id: str) -> bool:
        """Forget the monitor, its checks and its snapshots; False when the tenant has no
        such monitor."""

    async def due(
        self, now: datetime, limit: int, tenant: str | None = None
    ) -> Sequence[MonitorRecord]:
        """Active monitors whose ``next_check_at`` is at or before ``now``, soonest first
        (``tenant``: that tenant's only)."""

    async def tenants(self, limit: int) -> Sequence[str]:
        """Tenants keeping at least one monitor, in name order, at most ``limit``."""
