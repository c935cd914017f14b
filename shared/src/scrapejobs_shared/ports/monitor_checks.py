"""Where a monitor's checks, their pages and its page snapshots are kept.

Invariants: ``add`` creates a check once (a second ``add`` of one id answers False and
changes nothing: a retried start is one check); ``claim`` lets one caller at a time compare a
check's pages (a lease, taken again once it lapses); ``record`` writes pages and snapshots as
the comparison goes, ``finish`` the unchanged pages and then the check's final status, so a
check that reads finished has all of its pages; a finished check is never changed again.
"""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime
from typing import Protocol

from scrapejobs_shared.domain.monitor_checks import (
    CheckPage,
    CheckRecord,
    CheckStatus,
    PageSnapshot,
    PageStatus,
    SnapshotEntry,
)
from scrapejobs_shared.ports.page import PageRequest


class MonitorChecks(Protocol):
    async def add(self, check: CheckRecord) -> bool:
        """Keep a new check; False (and nothing written) when one of its id exists."""

    async def get(self, monitor_id: str, check_id: str) -> CheckRecord | None: ...

    async def listed(
        self, monitor_id: str, limit: int, after: str | None = None
    ) -> tuple[Sequence[CheckRecord], str | None]:
        """The monitor's checks, newest first, from the page token ``after``."""

    async def open_checks(self, limit: int, tenant: str | None = None) -> Sequence[CheckRecord]:
        """Unfinished checks of every monitor (``tenant``: of that tenant's), oldest first
        (the tick compares those whose job has ended, whether or not anyone reads them)."""

    async def mark(self, monitor_id: str, check_id: str, status: CheckStatus) -> None:
        """Move an unfinished check to ``status`` (queued -> running); a finished one stays."""

    async def claim(
        self, monitor_id: str, check_id: str, now: datetime, until: datetime
    ) -> CheckRecord | None:
        """The check, leased to this caller until ``until``, if it is unfinished and nobody
        else holds it; else None."""

    async def snapshot_entries(self, monitor_id: str) -> Sequence[SnapshotEntry]:
        """Every page snapshot of the monitor, without its content."""

    async def snapshots_of(self, monitor_id: str, urls: Sequence[str]) -> dict[str, PageSnapshot]:
        """The snapshots of those pages (by URL) that have one."""

    async def record(
        self, check: CheckRecord, pages: Sequence[CheckPage], snapshots: Sequence[PageSnapshot]
    ) -> None:
        """Write some of an unfinished check's pages (any status but ``same``) and the
        monitor's snapshots they changed."""

    async def keep(
        self, monitor_id: str, snapshots: Sequence[PageSnapshot], expire_at: datetime
    ) -> None:
        """Write page snapshots kept until ``expire_at`` (a scrape's change tracking: its
        team and tag stand for the monitor)."""

    async def finish(self, check: CheckRecord, same: Sequence[CheckPage]) -> None:
        """Write the check's ``same`` pages (kept together, not a document each), then
        ``check`` itself (finished)."""

    async def pages(
        self, monitor_id: str, check_id: str, status: PageStatus | None, page: PageRequest
    ) -> tuple[Sequence[CheckPage], str | None]:
        """A check's pages (of ``status``), from the request's token: the pages that are not
        ``same`` in URL-digest order, then the ``same`` ones in URL-digest order."""
