"""In-memory HostGate with the Firestore adapter's semantics (unit tests)."""

from __future__ import annotations

import itertools
import random
from datetime import datetime, timedelta

from scrapejobs_shared.politeness import host_gate as gate
from scrapejobs_shared.politeness.pace_grid import PaceGrid


class MemoryHostGate(gate.StoreSlots):
    """Free slots are taken lowest first (tests can say which one comes), or with
    ``random_slots`` in random order, as the Firestore gate takes them (the scale
    simulation: a few low slots taking every write would be hot where Firestore's are not).
    With ``rests``, a slot given back rests as the Firestore gate's do (``slot_free_at`` in
    host_gate.py: the contract tests, the scale simulation); without, by default, it is free at
    once, for unit tests of a process's own turns, which hand slots back and forth faster than
    a document takes."""

    def __init__(self, random_slots: bool = False, rests: bool = False) -> None:
        self._rests = rests
        self.slots: dict[tuple[str, int], tuple[datetime, int]] = {}  # → (lease until, token)
        self.takes: dict[tuple[str, int], tuple[datetime, ...]] = {}  # as the slot keeps them
        self.resting: dict[tuple[str, int], datetime] = {}  # given back, free from then
        self.next_at: dict[str, datetime] = {}
        self.open_until: dict[str, datetime] = {}
        self.failures: dict[str, int] = {}
        # host → wanter → until: a look reads one host's (the scale simulation's 10,000 hosts
        # and 200 instances made a scan of every want 90% of its CPU)
        self.wants: dict[str, dict[str, datetime]] = {}
        self.paces: dict[tuple[str, int], datetime] = {}  # (host, shard) → its next instant
        self._tokens = itertools.count()
        self._rng = random.Random() if random_slots else None

    def occupy(self, host: str, slot: int, until: datetime) -> None:
        """Tests: another instance holds ``slot`` of ``host`` until ``until``."""
        self.slots[(host, slot)] = (until, -1)

    async def acquire(
        self, host: str, limits: gate.HostLimits, lease_until: datetime, now: datetime
    ) -> gate.Permit | gate.Throttle:
        if throttle := (await self.signals(host)).throttle(now):
            return throttle
        grid = PaceGrid.of(limits)
        next_at = self.next_at.get(host)
        slots = list(range(limits.concurrency))
        if self._rng is not None:
            self._rng.shuffle(slots)
        for slot in slots:
            held = self.slots.get((host, slot))
            if (held is None or held[0] <= now) and self.resting.get((host, slot), now) <= now:
                if grid is not None:
                    return self._on_grid(host, grid, slot, lease_until, now)
                token = self._take(host, slot, lease_until, now)
                if limits.min_interval_s:
                    start = max(now, next_at or now)
                    self.next_at[host] = start + timedelta(seconds=limits.min_interval_s)
                failures = self.failures.get(host, 0)
                return gate.Permit(host, slot, token, failures, free_at=self._free_at(host, slot))
        return gate.Throttle(0.2, "concurrency")

    def _on_grid(
        self, host: str, grid: PaceGrid, slot: int, lease_until: datetime, now: datetime
    ) -> gate.Permit | gate.Throttle:
        """A fast pace (pace_grid.py): the slot, and an instant of the grid the request starts
        at (``Permit.starts_at``)."""
        starts_at = self._instant(host, grid, now)
        if isinstance(starts_at, gate.Throttle):
            return starts_at
        token = self._take(host, slot, lease_until, now)
        failures = self.failures.get(host, 0)
        free_at = self._free_at(host, slot)
        return gate.Permit(host, slot, token, failures, starts_at=starts_at, free_at=free_at)

    def _take(self, host: str, slot: int, lease_until: datetime, now: datetime) -> int:
        token = next(self._tokens)
        self.slots[(host, slot)] = (lease_until, token)
        self.takes[(host, slot)] = gate.slot_takes(self.takes.get((host, slot), ()), now)
        return token

    def _free_at(self, host: str, slot: int) -> datetime | None:
        """When the slot, given back, is free for others (None: at once, without ``rests``)."""
        return gate.slot_free_at(self.takes[(host, slot)]) if self._rests else None

    async def take_instant(
        self, host: str, limits: gate.HostLimits, now: datetime
    ) -> datetime | gate.Throttle:
        grid = PaceGrid.of(limits)
        return now if grid is None else self._instant(host, grid, now)

    def _instant(self, host: str, grid: PaceGrid, now: datetime) -> datetime | gate.Throttle:
        instant = grid.pick(now)
        if not grid.allows(self.paces.get((host, instant.shard)), instant):
            return gate.Throttle(grid.interval_s, "rate")
        self.paces[(host, instant.shard)] = grid.after(instant)
        return instant.start

    async def release(self, permit: gate.Permit) -> None:
        held = self.slots.get((permit.host, permit.slot))
        if held is not None and held[1] == permit.token:
            del self.slots[(permit.host, permit.slot)]
            if (free_at := self._free_at(permit.host, permit.slot)) is not None:
                self.resting[(permit.host, permit.slot)] = free_at

    async def record_success(self, permit: gate.Permit, now: datetime) -> None:
        self.failures[permit.host] = 0

    async def close_breaker(self, host: str, now: datetime) -> bool:
        until = self.open_until.pop(host, None)
        self.failures[host] = 0
        return until is not None and until > now

    async def record_failure(self, host: str, policy: gate.BreakerPolicy, now: datetime) -> None:
        self.failures[host] = self.failures.get(host, 0) + 1
        if self.failures[host] >= policy.failure_threshold:
            self.open_until[host] = now + timedelta(seconds=policy.cooldown_s)
            self.failures[host] = 0

    async def hold(self, host: str, until: datetime) -> None:
        current = self.next_at.get(host)
        self.next_at[host] = max(until, current) if current else until

    async def signals(self, host: str) -> gate.HostSignals:
        return gate.HostSignals(
            self.next_at.get(host), self.open_until.get(host), self.failures.get(host, 0)
        )

    async def state(self, host: str, now: datetime) -> gate.HostState:
        held = [lease for (h, _), (lease, _) in self.slots.items() if h == host]
        resting = [until for (h, _), until in self.resting.items() if h == host]
        in_flight = sum(1 for until in held + resting if until > now)  # as Firestore counts
        return gate.HostState(
            host,
            self.next_at.get(host),
            self.open_until.get(host),
            self.failures.get(host, 0),
            in_flight,
        )

    async def paused(self, now: datetime, limit: int) -> list[gate.PausedHost]:
        broken = [
            gate.PausedHost(h, t, "circuit_open") for h, t in self.open_until.items() if t > now
        ]
        held = [
            gate.PausedHost(h, t, "held")
            for h, t in self.next_at.items()
            if t > now + gate.PAUSE_AFTER
        ]
        return gate.merge_paused(broken + held, limit)

    async def want(self, host: str, wanter: str, until: datetime) -> None:
        self.wants.setdefault(host, {})[wanter] = until

    async def wanting(self, host: str, now: datetime) -> frozenset[str]:
        current = [w for w, until in self.wants.get(host, {}).items() if until > now]
        return frozenset(current[: gate.WANTERS_READ])
