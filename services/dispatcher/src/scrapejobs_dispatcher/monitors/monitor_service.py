"""Monitors as a tenant keeps them: created, listed, read, changed, paused and resumed,
deleted. A monitor's next check time follows its schedule while it is active and is cleared
while it is paused; every change is saved against the version it was made from (two edits at
once never lose one another)."""

from __future__ import annotations

import asyncio
import contextlib
import uuid
import weakref
from collections.abc import AsyncIterator, Awaitable, Callable, Sequence
from dataclasses import dataclass, field, replace
from datetime import datetime

from scrapejobs_dispatcher.rules.refusals import OverLimit
from scrapejobs_shared.domain.jobspec import JobRequest
from scrapejobs_shared.domain.monitors import (
    MonitorRecord,
    MonitorRequest,
    MonitorStatus,
    MonitorUpdate,
    check_rule_fields,
)
from scrapejobs_shared.errors import Conflict, NotFound
from scrapejobs_shared.ports.monitor_store import MonitorStore

SAVE_ATTEMPTS = 5
CHANGES_ITS_JOB = frozenset({"rules", "retention_days", "webhook"})  # MonitorUpdate's fields


@dataclass(frozen=True, slots=True)
class MonitorLimits:
    """What one tenant's monitors may take of the deployment (settings and Terraform)."""

    per_tenant: int = 100  # monitors a tenant keeps (SCRAPEJOBS_MONITORS_PER_TENANT)
    pages_per_check: int = 1000  # URLs, or a crawl's max_pages (SCRAPEJOBS_MONITOR_MAX_PAGES)


class MonitorNotFound(NotFound):
    """No such monitor for the caller's tenant."""

    template = "no such monitor"


class MonitorConflict(Conflict):
    """The monitor kept changing under this edit: try again."""

    template = "the monitor changed during this edit: try again"


async def _any_job(request: JobRequest, tenant: str) -> None:
    return None


@dataclass(eq=False)
class Monitors:
    """``allowed``: raises (``UnavailableHere``, ``OverLimit``) unless this deployment runs
    such a job (the submission rules' shape: an ``ai`` stage needs a provider, patterns within
    their budget): a monitor whose checks could not run is refused; ``limits``: what a tenant's
    monitors may take (``OverLimit`` past them)."""

    store: MonitorStore
    clock: Callable[[], datetime]
    allowed: Callable[[JobRequest, str], Awaitable[None]] = _any_job
    limits: MonitorLimits = field(default_factory=MonitorLimits)
    _locks: weakref.WeakValueDictionary[str, asyncio.Lock] = field(
        init=False, default_factory=weakref.WeakValueDictionary
    )

    async def create(self, tenant: str, request: MonitorRequest) -> MonitorRecord:
        await self.allowed(request.job_request(), tenant)
        self._within_pages(request)
        now = self.clock()
        monitor_id = f"mon_{uuid.uuid4().hex}"
        record = MonitorRecord(
            id=monitor_id,
            tenant=tenant,
            request=request,
            created_at=now,
            updated_at=now,
            next_check_at=_next_check(request, now, monitor_id),
        )
        async with self._creating(tenant):  # one transaction of a tenant's at a time here
            made = await self.store.create(record, self.limits.per_tenant)
        if not made:
            raise OverLimit(
                "monitors",
                f"this tenant keeps {self.limits.per_tenant} monitors, the most a tenant may "
                "keep here (SCRAPEJOBS_MONITORS_PER_TENANT); delete one first",
            )
        return record

    @contextlib.asynccontextmanager
    async def _creating(self, tenant: str) -> AsyncIterator[None]:
        """The tenant's creates in this instance one at a time (the store's cap holds across
        instances; in one, a burst would only make its transactions abort one another)."""
        lock = self._locks.get(tenant)
        if lock is None:
            lock = self._locks[tenant] = asyncio.Lock()
        async with lock:
            yield

    async def get(self, tenant: str, monitor_id: str) -> MonitorRecord:
        return await monitor_of(self.store, tenant, monitor_id)

    async def listed(
        self, tenant: str, limit: int, after: str | None
    ) -> tuple[Sequence[MonitorRecord], str | None]:
        return await self.store.listed(tenant, limit, after)

    async def update(self, tenant: str, monitor_id: str, update: MonitorUpdate) -> MonitorRecord:
        """Apply the settings ``update`` names. ``ValueError`` when the result is not a valid
        monitor (rules naming a field it does not extract, more ignored selectors than a job
        takes)."""
        changes = update.model_dump(exclude_unset=True)
        for _ in range(SAVE_ATTEMPTS):
            current = await self.get(tenant, monitor_id)
            request = current.request.model_copy(
                update={name: getattr(update, name) for name in changes}
            )
            check_rule_fields(request.rules, request.extract)
            self._within_pages(request)
            if changes.keys() & CHANGES_ITS_JOB:
                await self.allowed(request.job_request(), tenant)  # its checks can still run
            # a pause, a resume, a new name or schedule are always allowed: a check that cannot
            # start is recorded failed (check_runner.py)
            now = self.clock()
            schedule_moved = {"schedule", "status"} & changes.keys()
            changed = replace(
                current,
                request=request,
                updated_at=current.stamp(now),
                next_check_at=(
                    _next_check(request, now, current.id)
                    if schedule_moved
                    else current.next_check_at
                ),
            )
            if await self.store.save(changed, read_at=current.updated_at):
                return changed
        raise MonitorConflict(monitor_id)

    def _within_pages(self, request: MonitorRequest) -> None:
        most = self.limits.pages_per_check
        if request.most_pages() > most:
            field = "crawl.max_pages" if request.crawl is not None else "urls"
            field = "search.limit" if request.search is not None else field
            raise OverLimit(
                field,
                f"a monitor's check takes at most {most} pages here (SCRAPEJOBS_MONITOR_MAX_PAGES)",
            )

    async def set_status(
        self, tenant: str, monitor_id: str, status: MonitorStatus
    ) -> MonitorRecord:
        return await self.update(tenant, monitor_id, MonitorUpdate(status=status))

    async def delete(self, tenant: str, monitor_id: str) -> None:
        if not await self.store.delete(tenant, monitor_id):
            raise MonitorNotFound(monitor_id)


async def monitor_of(store: MonitorStore, tenant: str, monitor_id: str) -> MonitorRecord:
    """The tenant's monitor; ``MonitorNotFound`` when it has none of that id."""
    found = await store.get(tenant, monitor_id)
    if found is None:
        raise MonitorNotFound(monitor_id)
    return found


def _next_check(request: MonitorRequest, now: datetime, monitor_id: str) -> datetime | None:
    if request.status is MonitorStatus.PAUSED:
        return None
    return request.schedule.next_check(now, monitor_id)
