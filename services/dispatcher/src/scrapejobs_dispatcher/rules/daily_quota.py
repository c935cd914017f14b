"""The tenant's pages a day (``pages_per_day``), held whatever the burst: a submission's pages
(its URLs, its crawl's page limit, a monitor check's targets, the tasks a retry or replay runs
again) are reserved when it is accepted (ports/quota_ledger.py: one transaction on the
tenant's day), and one that would pass the quota is a ``QuotaExceeded`` (a 429 naming it, with
``Retry-After``). What accepted work did not use comes back: a cancel gives back what its job
will not fetch at once (``release``); before a submission is refused, the tenant's day is
settled (``settle``): each reservation of a job that has ended gives back what the job did
not fetch (a crawl that found fewer pages than its limit, a page reused from the cache, a
fetch without a response: job_usage.py), at most :data:`SETTLED_AT_ONCE` jobs a time, each
once.

A tenant's reservations arriving at one instance while one is being written go together in the
next write (one queue per tenant and day), so a burst costs a few transactions, not one each.
A tenant without a quota costs nothing."""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from datetime import date, datetime

from scrapejobs_dispatcher.rules.job_usage import Usage
from scrapejobs_dispatcher.rules.rules import Admission
from scrapejobs_dispatcher.tenants.tenant_quotas import QuotaExceeded, Quotas, renews_in
from scrapejobs_shared.ports.quota_ledger import QuotaLedger, Reservation

SETTLED_AT_ONCE = 100  # ended jobs' reservations settled before a submission is refused

# The usage of a reservation's job, given its key (None: not a job's, or the job is gone)
JobUsage = Callable[[str], Awaitable[Usage | None]]


@dataclass(eq=False)
class DailyQuota:
    quotas: Quotas
    ledger: QuotaLedger
    usage: JobUsage  # what a reservation's job did not use (``job_usage``)
    _queues: dict[tuple[str, date], _Queue] = field(init=False, default_factory=dict)

    async def admit(self, admission: Admission) -> None:
        quota, _ = await self.quotas.quota_of(admission.tenant)
        limit = quota.pages_per_day
        if not limit:
            return
        key = (admission.tenant, _day(admission.at))
        wanted = Reservation(admission.key, admission.pages)
        if await self._queue(key).reserve(wanted, limit):
            return
        if await self.settle(*key) and await self._queue(key).reserve(wanted, limit):
            return
        wait_s = renews_in(admission.at)
        raise QuotaExceeded(admission.tenant, "pages_per_day", limit, wait_s)

    async def settle(self, tenant: str, day: date) -> int:
        """Give back what the tenant's ended jobs of ``day`` did not use (each reservation
        settled once); how many pages came back."""
        back = 0
        for key in await self.ledger.unsettled(tenant, day, SETTLED_AT_ONCE):
            usage = await self.usage(key)
            if usage is None:  # not a job's (a replay's: settled when made), or gone
                await self.ledger.release(tenant, day, key, 0, final=True)
            elif usage.ended:
                await self.ledger.release(tenant, day, key, usage.unused, final=True)
                back += usage.unused
        return back

    def _queue(self, key: tuple[str, date]) -> _Queue:
        queue = self._queues.get(key)
        if queue is None:
            queue = self._queues[key] = _Queue(self.ledger, *key, self._forget)
        return queue

    async def release(self, admission: Admission, unused: int, final: bool = False) -> None:
        if unused > 0 or final:
            day = _day(admission.at)
            await self.ledger.release(admission.tenant, day, admission.key, unused, final)

    def _forget(self, queue: _Queue) -> None:
        if self._queues.get((queue.tenant, queue.day)) is queue:
            del self._queues[(queue.tenant, queue.day)]


def _day(moment: datetime) -> date:
    return moment.date()  # UTC: the clock is


@dataclass(eq=False)
class _Queue:
    """One tenant's day: reservations waiting for the next write, which one task makes."""

    ledger: QuotaLedger
    tenant: str
    day: date
    idle: Callable[[_Queue], None]  # called with the queue when it has nothing left
    pending: list[tuple[Reservation, int, asyncio.Future[bool]]] = field(default_factory=list)
    writing: asyncio.Task[None] | None = None

    async def reserve(self, reservation: Reservation, limit: int) -> bool:
        granted: asyncio.Future[bool] = asyncio.get_running_loop().create_future()
        self.pending.append((reservation, limit, granted))
        if self.writing is None:
            self.writing = asyncio.get_running_loop().create_task(self._write())
        return await asyncio.shield(granted)

    async def _write(self) -> None:
        try:
            while self.pending:
                batch, self.pending = self.pending, []
                limit = min(entry[1] for entry in batch)
                try:
                    granted = await self.ledger.reserve(
                        self.tenant, self.day, [entry[0] for entry in batch], limit
                    )
                except Exception as exc:  # each waiting submission gets the error
                    for _, _, future in batch:
                        if not future.done():
                            future.set_exception(exc)
                    continue
                for (_, _, future), ok in zip(batch, granted, strict=True):
                    if not future.done():
                        future.set_result(ok)
        finally:
            self.writing = None
            if not self.pending:
                self.idle(self)
