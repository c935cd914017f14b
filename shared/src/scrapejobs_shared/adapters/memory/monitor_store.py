"""In-memory MonitorStore (unit tests; the contract suite runs it beside Firestore's)."""

from __future__ import annotations

from datetime import datetime

from scrapejobs_shared.adapters.memory.monitor_checks import MemoryMonitorChecks
from scrapejobs_shared.domain.monitors import MonitorRecord, MonitorStatus


class MemoryMonitorStore:
    def __init__(self, checks: MemoryMonitorChecks | None = None) -> None:
        self.monitors: dict[str, MonitorRecord] = {}
        self._checks = checks  # what a monitor's deletion also forgets

    async def create(self, record: MonitorRecord, limit: int) -> bool:
        assert record.id not in self.monitors, "monitor ids are random: never reused"
        if await self.count_of(record.tenant) >= limit:
            return False
        self.monitors[record.id] = record
        return True

    async def get(self, tenant: str, monitor_id: str) -> MonitorRecord | None:
        found = self.monitors.get(monitor_id)
        return found if found is not None and found.tenant == tenant else None

    async def listed(
        self, tenant: str, limit: int, after: str | None = None
    ) -> tuple[list[MonitorRecord], str | None]:
        ordered = sorted(
            (m for m in self.monitors.values() if m.tenant == tenant),
            key=lambda m: (m.created_at, m.id),
            reverse=True,
        )
        ids = [m.id for m in ordered]
        start = ids.index(after) + 1 if after in ids else 0
        page = ordered[start : start + limit]
        more = start + limit < len(ordered)
        return page, page[-1].id if more and page else None

    async def count_of(self, tenant: str) -> int:
        return sum(1 for m in self.monitors.values() if m.tenant == tenant)

    async def save(self, record: MonitorRecord, read_at: datetime) -> bool:
        current = self.monitors.get(record.id)
        if current is None or current.tenant != record.tenant or current.updated_at != read_at:
            return False
        self.monitors[record.id] = record
        return True

    async def delete(self, tenant: str, monitor_id: str) -> bool:
        if await self.get(tenant, monitor_id) is None:
            return False
        del self.monitors[monitor_id]
        if self._checks is not None:
            self._checks.forget(monitor_id)
        return True

    async def due(
        self, now: datetime, limit: int, tenant: str | None = None
    ) -> list[MonitorRecord]:
        ready = [
            m
            for m in self.monitors.values()
            if m.status is MonitorStatus.ACTIVE
            and m.next_check_at is not None
            and m.next_check_at <= now
            and tenant in (None, m.tenant)
        ]
        return sorted(ready, key=lambda m: (m.next_check_at, m.id))[:limit]

    async def tenants(self, limit: int) -> list[str]:
        return sorted({m.tenant for m in self.monitors.values()})[:limit]
