"""In-memory HostGate with the Firestore adapter's semantics (unit tests)."""

from __future__ import annotations

import itertools
from datetime import datetime, timedelta

from scrapejobs_shared.politeness import host_gate as gate


class MemoryHostGate(gate.StoreSlots):
    def __init__(self) -> None:
        self.slots: dict[tuple[str, int], tuple[datetime, int]] = {}
        self.next_at: dict[str, datetime] = {}
        self.open_until: dict[str, datetime] = {}
        self.failures: dict[str, int] = {}
        self.wants: dict[tuple[str, str], datetime] = {}
        self._tokens = itertools.count()

    async def acquire(
        self, host: str, limits: gate.HostLimits, lease_until: datetime, now: datetime
    ) -> gate.Permit | gate.Throttle:
        if throttle := (await self.signals(host)).throttle(now):
            return throttle
        next_at = self.next_at.get(host)
        for slot in range(limits.concurrency):
            held = self.slots.get((host, slot))
            if held is None or held[0] <= now:
                token = next(self._tokens)
                self.slots[(host, slot)] = (lease_until, token)
                if limits.min_interval_s:
                    start = max(now, next_at or now)
                    self.next_at[host] = start + timedelta(seconds=limits.min_interval_s)
                return gate.Permit(host, slot, token, self.failures.get(host, 0))
        return gate.Throttle(0.2, "concurrency")

    async def release(self, permit: gate.Permit) -> None:
        held = self.slots.get((permit.host, permit.slot))
        if held is not None and held[1] == permit.token:
            del self.slots[(permit.host, permit.slot)]

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
        in_flight = sum(1 for (h, _), (lease, _) in self.slots.items() if h == host and lease > now)
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
        self.wants[(host, wanter)] = until

    async def wanting(self, host: str, now: datetime) -> frozenset[str]:
        current = [w for (h, w), until in self.wants.items() if h == host and until > now]
        return frozenset(current[: gate.WANTERS_READ])
