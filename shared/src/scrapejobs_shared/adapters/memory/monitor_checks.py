"""In-memory MonitorChecks (unit tests; the contract suite runs it beside Firestore's)."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace
from datetime import datetime

from scrapejobs_shared.domain import monitor_checks as domain
from scrapejobs_shared.ports.page import PageRequest


class MemoryMonitorChecks:
    def __init__(self) -> None:
        self.checks: dict[tuple[str, str], domain.CheckRecord] = {}
        self.leases: dict[tuple[str, str], datetime] = {}
        self.check_pages: dict[tuple[str, str], dict[str, domain.CheckPage]] = {}
        self.page_snapshots: dict[str, dict[str, domain.PageSnapshot]] = {}
        self.entries_read = 0  # calls of snapshot_entries (every snapshot of a monitor)

    def forget(self, monitor_id: str) -> None:
        """Everything of a deleted monitor."""
        for key in [key for key in self.checks if key[0] == monitor_id]:
            self.checks.pop(key)
            self.leases.pop(key, None)
            self.check_pages.pop(key, None)
        self.page_snapshots.pop(monitor_id, None)

    async def add(self, check: domain.CheckRecord) -> bool:
        key = (check.monitor_id, check.id)
        if key in self.checks:
            return False
        self.checks[key] = check
        return True

    async def get(self, monitor_id: str, check_id: str) -> domain.CheckRecord | None:
        return self.checks.get((monitor_id, check_id))

    async def listed(
        self, monitor_id: str, limit: int, after: str | None = None
    ) -> tuple[list[domain.CheckRecord], str | None]:
        ordered = sorted(
            (c for (m, _), c in self.checks.items() if m == monitor_id),
            key=lambda c: (c.created_at, c.id),
            reverse=True,
        )
        ids = [c.id for c in ordered]
        start = ids.index(after) + 1 if after in ids else 0
        page = ordered[start : start + limit]
        return page, page[-1].id if start + limit < len(ordered) and page else None

    async def open_checks(self, limit: int, tenant: str | None = None) -> list[domain.CheckRecord]:
        unfinished = (
            check
            for check in self.checks.values()
            if not check.finished and tenant in (None, check.tenant)
        )
        return sorted(unfinished, key=lambda check: (check.created_at, check.id))[:limit]

    async def mark(self, monitor_id: str, check_id: str, status: domain.CheckStatus) -> None:
        found = self.checks.get((monitor_id, check_id))
        if found is not None and not found.finished:
            self.checks[(monitor_id, check_id)] = replace(found, status=status)

    async def claim(
        self, monitor_id: str, check_id: str, now: datetime, until: datetime
    ) -> domain.CheckRecord | None:
        key = (monitor_id, check_id)
        found = self.checks.get(key)
        if found is None or found.finished or self.leases.get(key, now) > now:
            return None
        self.leases[key] = until
        return found

    async def snapshot_entries(self, monitor_id: str) -> list[domain.SnapshotEntry]:
        self.entries_read += 1
        return [s.entry for s in self.page_snapshots.get(monitor_id, {}).values()]

    async def snapshots_of(
        self, monitor_id: str, urls: Sequence[str]
    ) -> dict[str, domain.PageSnapshot]:
        kept = self.page_snapshots.get(monitor_id, {})
        found = (kept.get(domain.page_key(url)) for url in urls)
        return {s.url: s for s in found if s is not None}

    async def record(
        self,
        check: domain.CheckRecord,
        pages: Sequence[domain.CheckPage],
        snapshots: Sequence[domain.PageSnapshot],
    ) -> None:
        stored = self.check_pages.setdefault((check.monitor_id, check.id), {})
        for page in pages:
            stored[page.key] = page
        kept = self.page_snapshots.setdefault(check.monitor_id, {})
        for snapshot in snapshots:
            kept[snapshot.key] = snapshot

    async def keep(
        self, monitor_id: str, snapshots: Sequence[domain.PageSnapshot], expire_at: datetime
    ) -> None:
        kept = self.page_snapshots.setdefault(monitor_id, {})
        for snapshot in snapshots:
            kept[snapshot.key] = snapshot

    async def finish(self, check: domain.CheckRecord, same: Sequence[domain.CheckPage]) -> None:
        await self.record(check, same, ())
        key = (check.monitor_id, check.id)
        current = self.checks.get(key)
        if current is not None and not current.finished:
            self.checks[key] = check
        self.leases.pop(key, None)

    async def pages(
        self, monitor_id: str, check_id: str, status: domain.PageStatus | None, page: PageRequest
    ) -> tuple[list[domain.CheckPage], str | None]:
        kept = self.check_pages.get((monitor_id, check_id), {})
        ordered = sorted(
            (one for one in kept.values() if status is None or one.status is status),
            key=lambda one: (one.status is domain.PageStatus.SAME, one.key),
        )
        keys = [one.key for one in ordered]
        start = keys.index(page.token) + 1 if page.token in keys else 0
        listed = ordered[start : start + page.size]
        return listed, listed[-1].key if start + page.size < len(ordered) and listed else None
