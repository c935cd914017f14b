"""A monitor's checks: each one an ordinary job, whose pages are then compared with what the
previous checks found (the monitor's snapshot of each page).

A check is ``queued`` until its job runs, ``running`` while it does, and ends ``completed``
(every page compared), ``partial`` (some pages could not be fetched: ``error``), ``failed``
(none could, or the job failed as a whole) or ``skipped_overlap`` (started while the previous
check of the monitor still ran: it runs nothing). Its pages are ``same``, ``new``,
``changed``, ``removed`` (gone from the targets, or answered 404 or 410) or ``error``.

Comparing is idempotent: a page's snapshot remembers which check wrote it and what it held
before, so a comparison that stopped half way and is done again compares each page with the
same baseline and writes the same result.
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from enum import StrEnum
from typing import Any, Literal

from scrapejobs_shared.domain.page_validators import PageValidators

Trigger = Literal["manual", "scheduled"]


class CheckStatus(StrEnum):
    QUEUED = "queued"
    RUNNING = "running"
    COMPLETED = "completed"
    PARTIAL = "partial"
    FAILED = "failed"
    SKIPPED_OVERLAP = "skipped_overlap"


FINISHED_CHECKS = frozenset(
    {CheckStatus.COMPLETED, CheckStatus.PARTIAL, CheckStatus.FAILED, CheckStatus.SKIPPED_OVERLAP}
)


class PageStatus(StrEnum):
    SAME = "same"
    NEW = "new"
    CHANGED = "changed"
    REMOVED = "removed"
    ERROR = "error"


@dataclass(frozen=True, slots=True)
class CheckRecord:
    id: str
    monitor_id: str
    tenant: str
    trigger: Trigger
    status: CheckStatus
    created_at: datetime
    job_id: str | None = None  # None: skipped
    finished_at: datetime | None = None
    summary: dict[str, int] = field(default_factory=dict)  # pages by PageStatus, and total
    retention_days: int = 30  # the monitor's: how long the check and its pages are kept
    # a monitor of listed URLs: the pages with a snapshot that were no longer among its
    # targets when the check started (it finds them removed); None: not known (a crawl)
    departed: tuple[str, ...] | None = None
    error: str | None = None  # why a failed check could not start (its quota spent, ...)

    @property
    def expire_at(self) -> datetime:
        return self.created_at + timedelta(days=self.retention_days)

    @property
    def finished(self) -> bool:
        return self.status in FINISHED_CHECKS


@dataclass(frozen=True, slots=True)
class CheckPage:
    """A page as a check found it."""

    url: str
    status: PageStatus
    status_code: int | None = None
    diff: dict[str, Any] | None = None  # changed: fields and text (page_diff.PageDiff)
    notify: bool = False  # whether the change is worth telling (the rules)
    held_back_by: tuple[str, ...] = ()
    error: str | None = None

    @property
    def key(self) -> str:
        return page_key(self.url)

    @property
    def same(self) -> bool:
        return self.status is PageStatus.SAME


@dataclass(frozen=True, slots=True)
class Seen:
    """What one check (or scrape) found on a page: its extracted data and markdown, and when
    (None: not kept)."""

    data: dict[str, Any]
    markdown: str
    at: datetime | None = None


@dataclass(frozen=True, slots=True)
class PageSnapshot:
    """The monitor's memory of a page: what the last check that looked at it (``written_by``)
    found (``current``, None once the page is gone), and what was there before that check
    (``before``: the baseline should that check compare again); ``validators``: what the
    next check asks the site with (page_validators.py)."""

    url: str
    written_by: str
    current: Seen | None
    before: Seen | None = None
    validators: PageValidators | None = None

    @property
    def key(self) -> str:
        return page_key(self.url)

    @property
    def entry(self) -> SnapshotEntry:
        return SnapshotEntry(
            self.url,
            self.written_by,
            self.current is not None,
            self.before is not None,
            self.validators,
        )

    def baseline(self, check_id: str) -> Seen | None:
        """What check ``check_id`` compares the page with."""
        return self.before if self.written_by == check_id else self.current

    def after(
        self, check_id: str, found: Seen | None, validators: PageValidators | None = None
    ) -> PageSnapshot:
        """The snapshot once check ``check_id`` found ``found`` (None: the page is gone)."""
        return PageSnapshot(self.url, check_id, found, self.baseline(check_id), validators)


@dataclass(frozen=True, slots=True)
class SnapshotEntry:
    """A snapshot without its content: what starting a check (the validators) and finding
    the pages gone from the targets need, read for every page of a monitor."""

    url: str
    written_by: str
    has_current: bool
    has_before: bool
    validators: PageValidators | None = None

    def remembered(self, check_id: str) -> bool:
        """Whether check ``check_id`` has a baseline for the page (it was there before)."""
        return self.has_before if self.written_by == check_id else self.has_current


def page_key(url: str) -> str:
    """A page's id under its monitor (a digest: URLs do not fit document ids)."""
    return hashlib.sha256(url.encode()).hexdigest()[:32]
