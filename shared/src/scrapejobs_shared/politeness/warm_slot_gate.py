"""A HostGate decorator that keeps an instance's host slots warm between fetches.

Taking a slot costs the shared store a read and a guarded write, and giving it back another
write: three round trips per page, more than the fetch itself. A worker that fetches one host
page after page can keep the slot it just used and hand it to its next task for the same host,
so only the first fetch of a run pays for the slot.

What still holds, across every instance:

* **Concurrency.** A warm slot is still that instance's slot in the shared store (its lease
  has not run out), and it serves one fetch at a time, so the fetches in flight for a host never
  outnumber its slots. A warm slot is reused only by a job whose concurrency covers its number.
* **Leases.** Slots are taken with a lease ``keep_s`` longer than a fetch needs, and a warm
  slot is reused only while its lease still covers a whole fetch. A crashed instance's slots
  come free when their lease ends, ``keep_s`` later than without warm slots.
* **Sharing.** A slot idle for ``idle_s`` is given back, so other instances get it. Where the
  platform gives an instance CPU only during requests (Cloud Run's ``cpu_idle``), an instance
  that stops getting requests gives its warm slots back at its next request, at shutdown, or
  when their lease ends, whichever comes first.
* **Pauses.** Taking a fresh slot checks the host document as always. A warm reuse trusts a
  copy of it at most ``signals_ttl_s`` old for the circuit breaker and Retry-After holds; this
  instance's own holds and failures take effect at once.
* **Spacing.** A host with a request interval (rps, Crawl-delay) needs a shared write per
  request start anyway, so those acquisitions bypass warm slots entirely.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import Callable, Iterable
from dataclasses import dataclass, replace
from datetime import datetime, timedelta

from scrapejobs_shared.domain.clock import Clock
from scrapejobs_shared.ports.host_gate import (
    BreakerPolicy,
    HostGate,
    HostLimits,
    HostSignals,
    HostState,
    PausedHost,
    Permit,
    Throttle,
)

log = logging.getLogger(__name__)


@dataclass(frozen=True, slots=True)
class WarmSlotPolicy:
    keep_s: float = 20.0  # how long after it was taken a slot may serve more fetches
    idle_s: float = 1.0  # give a slot back after this long unused
    signals_ttl_s: float = 1.0  # oldest host document (breaker, holds) a warm reuse trusts


@dataclass(slots=True)
class _WarmSlot:
    permit: Permit
    lease_until: datetime
    idle_since: datetime


@dataclass(frozen=True, slots=True)
class _CachedSignals:
    signals: HostSignals
    read_at: datetime

    def fresh(self, now: datetime, ttl: timedelta) -> bool:
        return self.read_at <= now < self.read_at + ttl


class WarmSlotGate:
    def __init__(self, inner: HostGate, policy: WarmSlotPolicy, clock: Clock) -> None:
        self._inner = inner
        self._policy = policy
        self._clock = clock
        self._keep = timedelta(seconds=policy.keep_s)
        self._idle = timedelta(seconds=policy.idle_s)
        self._ttl = timedelta(seconds=policy.signals_ttl_s)
        self._warm: dict[str, list[_WarmSlot]] = {}
        self._leases: dict[Permit, datetime] = {}  # permits out, taken with a kept lease
        self._signals: dict[str, _CachedSignals] = {}
        self._sweeper: asyncio.Task[None] | None = None

    async def acquire(
        self, host: str, limits: HostLimits, lease_until: datetime, now: datetime
    ) -> Permit | Throttle:
        if limits.min_interval_s:
            return await self._inner.acquire(host, limits, lease_until, now)
        await self._give_back(lambda w: w.lease_until < lease_until, hosts=[host])
        if self._has_warm(host, limits, lease_until):
            # A warm slot skips the store's own check of the host document: check it here.
            signals = await self._fresh_signals(host, now)
            if throttle := signals.throttle(now):
                return throttle
            if warm := self._take_warm(host, limits, lease_until):
                permit = warm.permit
                if permit.failures != signals.failures:
                    permit = replace(permit, failures=signals.failures)
                self._leases[permit] = warm.lease_until
                return permit
        kept_until = lease_until + self._keep
        result = await self._inner.acquire(host, limits, kept_until, now)
        if isinstance(result, Permit):
            self._leases[result] = kept_until
        return result

    async def release(self, permit: Permit) -> None:
        lease_until = self._leases.pop(permit, None)
        if lease_until is None:
            await self._inner.release(permit)
            return
        self._warm.setdefault(permit.host, []).append(_WarmSlot(permit, lease_until, self._clock()))
        self._start_sweeper()

    async def record_success(self, permit: Permit, now: datetime) -> None:
        await self._inner.record_success(permit, now)
        cached = self._signals.get(permit.host)
        if cached is not None and cached.signals.failures:
            cleared = replace(cached.signals, failures=0)
            self._signals[permit.host] = replace(cached, signals=cleared)

    async def record_failure(self, host: str, policy: BreakerPolicy, now: datetime) -> None:
        await self._inner.record_failure(host, policy, now)
        self._signals.pop(host, None)

    async def hold(self, host: str, until: datetime) -> None:
        await self._inner.hold(host, until)
        self._signals.pop(host, None)

    async def signals(self, host: str) -> HostSignals:
        return await self._inner.signals(host)

    async def state(self, host: str, now: datetime) -> HostState:
        return await self._inner.state(host, now)

    async def paused(self, now: datetime, limit: int) -> list[PausedHost]:
        return await self._inner.paused(now, limit)

    async def close(self) -> None:
        """Give every warm slot back (on shutdown)."""
        if self._sweeper is not None:
            self._sweeper.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await self._sweeper
            self._sweeper = None
        await self._give_back(lambda _: True)

    async def sweep(self) -> None:
        """Give back the slots idle for ``idle_s`` or whose lease has ended; forget host
        documents older than ``signals_ttl_s``."""
        now = self._clock()
        self._signals = {h: c for h, c in self._signals.items() if c.fresh(now, self._ttl)}
        await self._give_back(lambda w: w.idle_since + self._idle <= now or w.lease_until <= now)

    async def _fresh_signals(self, host: str, now: datetime) -> HostSignals:
        cached = self._signals.get(host)
        if cached is None or not cached.fresh(now, self._ttl):
            cached = _CachedSignals(await self._inner.signals(host), now)
            self._signals[host] = cached
        return cached.signals

    def _has_warm(self, host: str, limits: HostLimits, lease_until: datetime) -> bool:
        return any(_serves(w, limits, lease_until) for w in self._warm.get(host, []))

    def _take_warm(self, host: str, limits: HostLimits, lease_until: datetime) -> _WarmSlot | None:
        warm = self._warm.get(host, [])
        chosen = next((w for w in warm if _serves(w, limits, lease_until)), None)
        self._set_warm(host, [w for w in warm if w is not chosen])
        return chosen

    async def _give_back(
        self, due: Callable[[_WarmSlot], bool], hosts: Iterable[str] | None = None
    ) -> None:
        """Give back the warm slots that are ``due`` (of ``hosts``, else of every host)."""
        for host in list(self._warm if hosts is None else hosts):
            warm = self._warm.get(host, [])
            returning = [w for w in warm if due(w)]
            self._set_warm(host, [w for w in warm if w not in returning])
            for slot in returning:
                await self._give_back_one(slot)

    async def _give_back_one(self, slot: _WarmSlot) -> None:
        try:
            await self._inner.release(slot.permit)
        except Exception:  # its lease ends anyway; neither a fetch nor the sweeper should fail
            log.exception("giving a warm host slot back failed", extra={"host": slot.permit.host})

    def _set_warm(self, host: str, warm: list[_WarmSlot]) -> None:
        if warm:
            self._warm[host] = warm
        else:
            self._warm.pop(host, None)

    def _start_sweeper(self) -> None:
        if self._sweeper is None or self._sweeper.done():
            self._sweeper = asyncio.create_task(self._sweep_while_warm(), name="warm-slot-sweeper")

    async def _sweep_while_warm(self) -> None:
        while self._warm:
            await asyncio.sleep(self._policy.idle_s / 2)
            await self.sweep()


def _serves(warm: _WarmSlot, limits: HostLimits, lease_until: datetime) -> bool:
    """The warm slot's lease covers a fetch leased until ``lease_until``, and its number is
    within the job's concurrency."""
    return warm.lease_until >= lease_until and warm.permit.slot < limits.concurrency
