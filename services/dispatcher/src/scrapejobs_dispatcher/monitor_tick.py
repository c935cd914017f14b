"""The monitors' schedule: a tick every minute (Cloud Scheduler; make dev's LocalScheduler)
starts the check of every active monitor whose time has come and compares the checks whose job
has ended, so their events go out whether or not anyone reads them.

Isolated, bounded and fair: each monitor and each check on its own (a check that cannot start
is recorded failed and its schedule moves on; an error on one never stops the others), tenants
take turns, and a tick starts no new work after its budget (the rest is the next tick's).
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace
from datetime import datetime
from typing import TypeVar

from scrapejobs_dispatcher.check_runner import CANNOT_START, SAVE_ATTEMPTS, CheckRunner
from scrapejobs_dispatcher.monitor_service import MonitorNotFound
from scrapejobs_shared.domain.monitors import MonitorRecord
from scrapejobs_shared.ports.monitor_checks import MonitorChecks
from scrapejobs_shared.ports.monitor_store import MonitorStore

log = logging.getLogger(__name__)
T = TypeVar("T")
TICK_BUDGET_S = 20.0  # one tick's work; what is left goes to the next (every minute)


@dataclass(frozen=True, slots=True)
class Tick:
    due: int  # monitors whose check was started (or found started)
    compared: int  # checks whose job had ended, compared
    failed: int = 0  # due monitors whose check could not start: recorded failed, schedule moved
    errors: int = 0  # starts or comparisons that met an error of ours: tried again next tick
    left: int = 0  # due monitors and open checks left to the next tick (its time was up)


class MonitorTick:
    def __init__(
        self,
        monitors: MonitorStore,
        checks: MonitorChecks,
        runner: CheckRunner,
        clock: Callable[[], datetime],
    ) -> None:
        self._monitors = monitors
        self._checks = checks
        self._runner = runner
        self._clock = clock

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
        now = self._clock()
        due = round_robin(await self._monitors.due(now, limit), lambda m: m.tenant)
        started = failed = errors = left = 0
        for n, monitor in enumerate(due):
            if time.monotonic() >= stop_at:
                left += len(due) - n
                break
            slot = monitor.next_check_at
            assert slot is not None
            try:
                await self._runner.start(monitor.tenant, monitor.id, "scheduled", slot)
                started += 1
            except MonitorNotFound:
                continue  # deleted meanwhile
            except CANNOT_START:
                failed += 1  # recorded on the check (CheckRunner._submitted)
            except Exception:
                errors += 1
                log.exception("check not started: tried again next tick", extra=_of(monitor))
                continue
            await self._advance(monitor, slot, now)
        compared = 0
        open_checks = round_robin(await self._checks.open_checks(limit), lambda c: c.tenant)
        for n, check in enumerate(open_checks):
            if time.monotonic() >= stop_at:
                left += len(open_checks) - n
                break
            try:
                owner = await self._monitors.get(check.tenant, check.monitor_id)
                if owner is not None and (await self._runner.settle(owner, check)).finished:
                    compared += 1
            except Exception:
                errors += 1
                log.exception(
                    "check not compared: tried again next tick",
                    extra={"monitor_id": check.monitor_id, "check_id": check.id},
                )
        return Tick(started, compared, failed, errors, left)

    async def _advance(self, monitor: MonitorRecord, slot: datetime, now: datetime) -> None:
        """Move the monitor's next check time past ``slot`` and ``now`` (unless it moved)."""
        for _ in range(SAVE_ATTEMPTS):
            current = await self._monitors.get(monitor.tenant, monitor.id)
            if current is None or current.next_check_at is None or current.next_check_at > slot:
                return
            later = current.request.schedule.next_check(max(now, slot), current.id)
            moved = replace(
                current,
                next_check_at=later,
                updated_at=current.stamp(self._clock()),
            )
            if await self._monitors.save(moved, read_at=current.updated_at):
                return


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
