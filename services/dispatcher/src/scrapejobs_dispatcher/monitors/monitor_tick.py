"""The monitors' schedule: a tick every minute (Cloud Scheduler; make dev's LocalScheduler)
starts the check of every active monitor whose time has come and compares the checks whose job
has ended, so their events go out whether or not anyone reads them.

Isolated, bounded and fair: each monitor and each check on its own (a check that cannot start
is recorded failed and its schedule moves on; an error on one never stops the others), tenants
take turns (eight starts or comparisons under way at once, in their order), and a tick starts no
new work after its budget (the rest is the next tick's). A tenant's backlog hides no other's:
when the oldest-first read of everyone's is full, each tenant is read on its own too.
"""

from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass, replace
from datetime import datetime
from functools import partial
from typing import TypeVar

from scrapejobs_dispatcher.monitors.check_runner import CANNOT_START, SAVE_ATTEMPTS, CheckRunner
from scrapejobs_dispatcher.monitors.monitor_service import MonitorNotFound
from scrapejobs_shared.domain.monitor_checks import CheckRecord
from scrapejobs_shared.domain.monitors import MonitorRecord
from scrapejobs_shared.ports.monitor_checks import MonitorChecks
from scrapejobs_shared.ports.monitor_store import MonitorStore

log = logging.getLogger(__name__)
T = TypeVar("T")
TICK_BUDGET_S = 20.0  # one tick's work; what is left goes to the next (every minute)
AT_ONCE = 8  # starts (or comparisons) under way at once, in the tenants' turns
SHARE = 2  # due monitors (or open checks) a tick reads of each tenant, at least, in a backlog
MAX_TENANTS = 2000  # tenants a tick reads one by one in a backlog
Read = Callable[[int, str | None], Awaitable[Sequence[T]]]
STARTED, FAILED, GONE, COMPARED, WAITING, ERROR = (
    "started",
    "failed",
    "gone",
    "compared",
    "waiting",
    "error",
)


@dataclass(frozen=True, slots=True)
class Tick:
    due: int  # monitors whose check was started (or found started)
    compared: int  # checks whose job had ended, compared
    failed: int = 0  # due monitors whose check could not start: recorded failed, schedule moved
    errors: int = 0  # starts or comparisons that met an error of ours: tried again next tick
    left: int = 0  # due monitors and open checks left to the next tick (its time was up)


@dataclass(eq=False)
class MonitorTick:
    monitors: MonitorStore
    checks: MonitorChecks
    runner: CheckRunner
    clock: Callable[[], datetime]

    async def run(self, limit: int = 100, budget_s: float = TICK_BUDGET_S) -> Tick:
        """The schedule's tick (every minute): start the check of every active monitor whose
        time has come, moving its next check time on past now; then compare the checks whose
        job has ended, so their events go out whether or not anyone reads them.

        Each monitor and each check on its own: a check that cannot start is recorded failed
        and its monitor's schedule moves on; an error of ours on one is logged and tried again
        next tick; neither stops the others. Tenants take turns (round robin, in the order
        each one's came due), and the tick stops starting work after ``budget_s`` (what is
        left goes to the next tick)."""
        stop_at = time.monotonic() + budget_s
        now = self.clock()
        due_now = partial(self.monitors.due, now)
        due = round_robin(await self._each_tenants(due_now, limit), lambda m: m.tenant)
        starts, left = await _in_turns(due, lambda m: self._start(m, now), stop_at)
        open_checks = round_robin(
            await self._each_tenants(self.checks.open_checks, limit), lambda c: c.tenant
        )
        compares, left_open = await _in_turns(open_checks, self._compare, stop_at)
        return Tick(
            due=starts.count(STARTED),
            compared=compares.count(COMPARED),
            failed=starts.count(FAILED),
            errors=starts.count(ERROR) + compares.count(ERROR),
            left=left + left_open,
        )

    async def _each_tenants(self, read: Read[T], limit: int) -> list[T]:
        """What ``read`` finds of every tenant's: one read of everyone's (oldest first); when
        that is full, a backlog may hide another tenant's behind it, so each tenant keeping
        monitors is read on its own, for a share of ``limit`` (at least :data:`SHARE`)."""
        found = list(await read(limit, None))
        if len(found) < limit:
            return found
        tenants = await self.monitors.tenants(MAX_TENANTS)
        share = max(SHARE, limit // max(1, len(tenants)))
        each: list[T] = []
        for start in range(0, len(tenants), AT_ONCE):
            reads = (read(share, tenant) for tenant in tenants[start : start + AT_ONCE])
            for items in await asyncio.gather(*reads):
                each += items
        return each

    async def _start(self, monitor: MonitorRecord, now: datetime) -> str:
        """Start the monitor's scheduled check and move its time on: what came of it."""
        slot = monitor.next_check_at
        assert slot is not None
        try:
            await self.runner.start(monitor.tenant, monitor.id, "scheduled", slot)
            outcome = STARTED
        except MonitorNotFound:
            return GONE  # deleted meanwhile
        except CANNOT_START:
            outcome = FAILED  # recorded on the check (CheckRunner._submitted)
        except Exception:
            log.exception("check not started: tried again next tick", extra=_of(monitor))
            return ERROR
        await self._advance(monitor, slot, now)
        return outcome

    async def _compare(self, check: CheckRecord) -> str:
        try:
            owner = await self.monitors.get(check.tenant, check.monitor_id)
            if owner is not None and (await self.runner.settle(owner, check)).finished:
                return COMPARED
        except Exception:
            log.exception(
                "check not compared: tried again next tick",
                extra={"monitor_id": check.monitor_id, "check_id": check.id},
            )
            return ERROR
        return WAITING

    async def _advance(self, monitor: MonitorRecord, slot: datetime, now: datetime) -> None:
        """Move the monitor's next check time past ``slot`` and ``now`` (unless it moved)."""
        for _ in range(SAVE_ATTEMPTS):
            current = await self.monitors.get(monitor.tenant, monitor.id)
            if current is None or current.next_check_at is None or current.next_check_at > slot:
                return
            later = current.request.schedule.next_check(max(now, slot), current.id)
            moved = replace(
                current,
                next_check_at=later,
                updated_at=current.stamp(self.clock()),
            )
            if await self.monitors.save(moved, read_at=current.updated_at):
                return


async def _in_turns(
    items: Sequence[T], run: Callable[[T], Awaitable[str]], stop_at: float
) -> tuple[list[str], int]:
    """``run`` each item, :data:`AT_ONCE` at a time in the order given, until ``stop_at``
    (``time.monotonic``): what came of each, and how many were left."""
    outcomes: list[str] = []
    for start in range(0, len(items), AT_ONCE):
        if time.monotonic() >= stop_at:
            return outcomes, len(items) - start
        outcomes += await asyncio.gather(*(run(item) for item in items[start : start + AT_ONCE]))
    return outcomes, 0


def round_robin(items: Sequence[T], owner: Callable[[T], str]) -> list[T]:
    """``items`` with their owners taking turns: each owner's first, then each one's second...
    (each owner's in the order given, owners in the order they first appear)."""
    queues: dict[str, list[T]] = {}
    for item in items:
        queues.setdefault(owner(item), []).append(item)
    turns: list[T] = []
    for depth in range(max((len(q) for q in queues.values()), default=0)):
        turns += [q[depth] for q in queues.values() if depth < len(q)]
    return turns


def _of(monitor: MonitorRecord) -> dict[str, str]:
    return {"monitor_id": monitor.id, "tenant": monitor.tenant}
