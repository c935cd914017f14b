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
* **Fair shares.** A process refused by the store for want of a free slot says so (``want``:
  one small document of its own, refreshed while it waits, withdrawn when its holding of the
  host ends). A process holding more than half a host's slots, or wanting more, or knowing of
  wanters, looks at who waits for that host every ``check_s`` (one query, only while it holds
  some), and while others wait it keeps no more than its share, ``concurrency // (1 +
  waiting processes)``: a slot coming back beyond the share goes back to the store at once
  instead of to its own next fetch, an idle one after ``contended_idle_s``, and its own lanes
  wait without asking the store, looking again every ``capped_check_s`` whether the others
  still wait. A want lasts while the process waits: once a slot of the host sits idle in it
  for ``wanting_idle_s`` (its lanes have all they need), or its holding ends, it withdraws
  the want, so a process between two batches of a host or at a batch's last pages never keeps
  the others to a share. Without this, a process kept every slot of a host warm for its own
  next batch while another process's lanes waited (the host-slot stall), and with it but
  slower to notice, a share outlived the others' wait by up to a second at every batch
  boundary.
* **Rests.** A slot's document takes at most four takes in any 10 s (``slot_free_at`` in
  host_gate.py): given back after the fourth, it rests, free for no one until the first is
  10 s old. So a slot that would rest stays warm here until its rest is over, idle or beyond
  the share: giving it back would not serve the others sooner, and this process's next batch
  of the host may use it meanwhile (two processes taking one host's 8 slots by turns at their
  batch boundaries had spent every slot's takes and then waited for their rests: bench A's
  ``where_time_goes.py`` 447 → 172 pages a second).
* **Pauses.** Taking a fresh slot checks the host document as always. A warm reuse trusts a
  copy of it at most ``signals_ttl_s`` old for the circuit breaker and Retry-After holds (the
  fresh slot's own grant counts as such a copy: no pause was in force then); this instance's
  own holds and failures take effect at once.
* **Spacing.** A host with a request interval (rps, Crawl-delay) needs a shared write per
  request start anyway. A slow one (one document: pace_grid.py) bypasses warm slots
  entirely; a fast one keeps them, and each reuse takes an instant of the pace's grid from
  the store (``take_instant``: one write to a pace shard instead of the slot's two; ``make
  scale``'s one host at 50 requests a second had its slot documents refusing writes).
"""

from __future__ import annotations

import asyncio
import contextlib
import contextvars
import logging
import os
import uuid
from collections.abc import Callable, Iterable
from dataclasses import dataclass, replace
from datetime import datetime, timedelta

from scrapejobs_shared.domain.clock import Clock
from scrapejobs_shared.observability.store_ops import counting
from scrapejobs_shared.politeness.host_gate import (
    BreakerPolicy,
    HostGate,
    HostLimits,
    HostSignals,
    HostState,
    PausedHost,
    Permit,
    Throttle,
)
from scrapejobs_shared.politeness.pace_grid import PaceGrid

log = logging.getLogger(__name__)
SWEPT = "host slots swept"  # the log line of a sweep that used the store (bench: its costs)
WANTS_KEPT = 4096  # hosts whose last want this process remembers (a broad crawl sees many)


@dataclass(frozen=True, slots=True)
class WarmSlotPolicy:
    keep_s: float = 20.0  # how long after it was taken a slot may serve more fetches
    idle_s: float = 1.0  # give a slot back after this long unused
    signals_ttl_s: float = 1.0  # oldest host document (breaker, holds) a warm reuse trusts
    # how often a holder of over half a host's slots looks for wanters: two processes on one
    # host, each holding its slots for a turn shorter than this, took every slot by turns
    # without either learning that the other waited (0.5 s: 400-670 pages/s of one host on
    # two worker processes, against ~1,100 at 0.15 s; bench/README.md, "Turns at one host")
    check_s: float = 0.15
    want_s: float = 3.0  # how long a posted want lasts (refreshed while still refused)
    contended_idle_s: float = 0.15  # an idle slot that others wait for goes back after this
    # (long enough for this process's next batch of the host, if it has one, to take it)
    capped_check_s: float = 0.2  # how often a process kept to its share looks again (one read)
    wanting_idle_s: float = 0.1  # a slot of the host idle this long: the process wants no more


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


@dataclass(slots=True)
class _Holding:
    """This process's slots of one host, taken with kept leases (warm or out on a fetch)."""

    count: int
    since: datetime
    concurrency: int  # the limit of the last acquisition for the host
    others: int = 0  # other processes waiting for the host, at the last look
    looked_at: datetime | None = None

    def share(self) -> int:
        return self.concurrency // (1 + self.others)

    def capped(self) -> bool:
        """Others wait and this process holds its share (at least one slot) or more."""
        return self.others > 0 and self.count >= max(1, self.share())


class WarmSlotGate:
    def __init__(
        self, inner: HostGate, policy: WarmSlotPolicy, clock: Clock, process_id: str = ""
    ) -> None:
        self._inner = inner
        self._policy = policy
        self._clock = clock
        self._me = process_id or f"{os.getpid()}-{uuid.uuid4().hex[:8]}"
        self._keep = timedelta(seconds=policy.keep_s)
        self._idle = timedelta(seconds=policy.idle_s)
        self._contended_idle = timedelta(seconds=policy.contended_idle_s)
        self._ttl = timedelta(seconds=policy.signals_ttl_s)
        self._check = timedelta(seconds=policy.check_s)
        self._capped_check = timedelta(seconds=policy.capped_check_s)
        self._wanting_idle = timedelta(seconds=policy.wanting_idle_s)
        self._want = timedelta(seconds=policy.want_s)
        self._warm: dict[str, list[_WarmSlot]] = {}
        self._leases: dict[Permit, datetime] = {}  # permits out, taken with a kept lease
        self._held: dict[str, _Holding] = {}
        self._wanted_at: dict[str, datetime] = {}  # host -> when this process last said so
        self._ended: set[str] = set()  # hosts whose holding ended since the last sweep
        self._signals: dict[str, _CachedSignals] = {}
        self._sweeper: asyncio.Task[None] | None = None

    async def acquire(
        self, host: str, limits: HostLimits, lease_until: datetime, now: datetime
    ) -> Permit | Throttle:
        grid = PaceGrid.of(limits)
        if limits.min_interval_s and grid is None:
            return await self._inner.acquire(host, limits, lease_until, now)
        await self._give_back(lambda w: w.lease_until < lease_until, hosts=[host])
        if self._has_warm(host, limits, lease_until):
            warm = await self._from_warm(host, limits, lease_until, now)
            if isinstance(warm, Permit) and grid is not None:
                return await self._on_grid(warm, limits, now)
            if warm is not None:
                return warm
        holding = self._held.get(host)
        if holding is not None and holding.others:
            holding.concurrency = limits.concurrency
            if holding.capped() and await self._capped_still(host, holding, now):
                # this process holds its share while others wait: wait here, not at the store
                await self._say_wanted(host, now)
                return Throttle(self._policy.capped_check_s, "share")
        return await self._from_store(host, limits, lease_until, now)

    async def _on_grid(
        self, permit: Permit, limits: HostLimits, now: datetime
    ) -> Permit | Throttle:
        """A warm slot of a fast pace: an instant of its grid from the store (one write to a
        pace shard, no slot write); the slot stays warm when the instant is refused."""
        starts_at = await self._inner.take_instant(permit.host, limits, now)
        if isinstance(starts_at, Throttle):
            await self.release(permit)
            return starts_at
        paced = replace(permit, starts_at=starts_at)
        self._leases[paced] = self._leases.pop(permit)
        return paced

    async def _capped_still(self, host: str, holding: _Holding, now: datetime) -> bool:
        """Whether others still wait for ``host``, looked at again every ``capped_check_s``
        (they may have stopped wanting since the last look: then this process's cap ends)."""
        if holding.looked_at is None or now >= holding.looked_at + self._capped_check:
            await self._look(host, holding, now)
        return holding.capped()

    def take_warm(
        self, host: str, limits: HostLimits, lease_until: datetime, now: datetime
    ) -> Permit | None:
        """A warm slot, only when this process's copy of the host document is fresh and shows
        no pause (else None: :meth:`acquire` reads it, or waits the pause out). The checks are
        :meth:`acquire`'s for a warm slot: a spacing host keeps none, a slot serves a job
        whose concurrency covers it for a whole lease, a slot beyond the share never stayed."""
        cached = self._signals.get(host)
        if limits.min_interval_s or cached is None or not cached.fresh(now, self._ttl):
            return None
        if cached.signals.throttle(now):
            return None
        return self._warm_permit(host, limits, lease_until, cached.signals)

    async def _from_warm(
        self, host: str, limits: HostLimits, lease_until: datetime, now: datetime
    ) -> Permit | Throttle | None:
        """A warm slot of ``host``, or the pause the host is under; None when none is left."""
        # A warm slot skips the store's own check of the host document: check it here.
        signals = await self._fresh_signals(host, now)
        if throttle := signals.throttle(now):
            return throttle
        return self._warm_permit(host, limits, lease_until, signals)

    def _warm_permit(
        self, host: str, limits: HostLimits, lease_until: datetime, signals: HostSignals
    ) -> Permit | None:
        warm = self._take_warm(host, limits, lease_until)
        if warm is None:
            return None
        permit = warm.permit
        if permit.failures != signals.failures:
            permit = replace(permit, failures=signals.failures)
        self._leases[permit] = warm.lease_until
        return permit

    async def _from_store(
        self, host: str, limits: HostLimits, lease_until: datetime, now: datetime
    ) -> Permit | Throttle:
        kept_until = lease_until + self._keep
        result = await self._inner.acquire(host, limits, kept_until, now)
        if isinstance(result, Permit):
            self._leases[result] = kept_until
            self._took(host, limits.concurrency, now)
            if host not in self._signals:
                # the store granted it after reading the host document: no pause held at
                # ``now``; warm reuses trust that as they would trust their own read of it
                self._signals[host] = _CachedSignals(HostSignals(failures=result.failures), now)
        elif result.reason == "concurrency":
            await self._say_wanted(host, now)
        return result

    async def release(self, permit: Permit) -> None:
        lease_until = self._leases.pop(permit, None)
        if lease_until is None:
            await self._inner.release(permit)
            return
        holding = self._held.get(permit.host)
        beyond_share = holding is not None and holding.others and holding.count > holding.share()
        if beyond_share and _free_for_others(permit, self._clock()):
            await self._give_back_one(permit)  # beyond this process's share: others wait
            return
        self._warm.setdefault(permit.host, []).append(_WarmSlot(permit, lease_until, self._clock()))
        self._start_sweeper()

    async def take_instant(
        self, host: str, limits: HostLimits, now: datetime
    ) -> datetime | Throttle:
        return await self._inner.take_instant(host, limits, now)

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

    async def close_breaker(self, host: str, now: datetime) -> bool:
        self._signals.pop(host, None)
        return await self._inner.close_breaker(host, now)

    async def signals(self, host: str) -> HostSignals:
        return await self._inner.signals(host)

    async def state(self, host: str, now: datetime) -> HostState:
        return await self._inner.state(host, now)

    async def paused(self, now: datetime, limit: int) -> list[PausedHost]:
        return await self._inner.paused(now, limit)

    async def want(self, host: str, wanter: str, until: datetime) -> None:
        await self._inner.want(host, wanter, until)

    async def wanting(self, host: str, now: datetime) -> frozenset[str]:
        return await self._inner.wanting(host, now)

    async def close(self) -> None:
        """Give every warm slot back (on shutdown)."""
        if self._sweeper is not None:
            self._sweeper.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await self._sweeper
            self._sweeper = None
        await self._give_back(lambda _: True)

    async def sweep(self) -> None:
        """Look for wanters of the hosts this process holds most of; give back the slots idle
        for ``idle_s`` (``contended_idle_s`` while others wait for them) or whose lease has
        ended; forget host documents older than ``signals_ttl_s``."""
        now = self._clock()
        self._signals = {h: c for h, c in self._signals.items() if c.fresh(now, self._ttl)}
        await self._look_for_wanters(now)

        def due(warm: _WarmSlot) -> bool:
            holding = self._held.get(warm.permit.host)
            idle = self._contended_idle if holding is not None and holding.others else self._idle
            idled = warm.idle_since + idle <= now and _free_for_others(warm.permit, now)
            return idled or warm.lease_until <= now

        await self._give_back(due)
        # a slot idle, or its holding over: it wants the host no more (a process refused
        # every slot holds none and still wants it: its want stays until it runs out)
        for host in list(self._wanted_at):
            if (host in self._ended and host not in self._held) or self._idle_slot(host, now):
                await self._withdraw_want(host, now)
        self._ended.clear()

    async def _look_for_wanters(self, now: datetime) -> None:
        """For each host this process holds more than half the slots of, or wants more of, or
        knew others to wait for: how many other processes wait for it, at most every
        ``check_s`` (a process short of slots that learns it holds its share stops asking the
        store, for 2-3 reads an ask, and waits here for nothing). A holding is first looked at
        once it is ``check_s`` old."""
        for host, holding in list(self._held.items()):
            mostly_ours = holding.count > holding.concurrency // 2
            if not (mostly_ours or holding.others or self._wants(host, now)):
                continue
            if now < holding.since + self._check:
                continue
            if holding.looked_at is not None and now < holding.looked_at + self._check:
                continue
            await self._look(host, holding, now)

    async def _look(self, host: str, holding: _Holding, now: datetime) -> None:
        """How many other processes wait for ``host`` now (one query)."""
        try:
            wanters = await self._inner.wanting(host, now)
        except Exception:  # looked at again later; fetches go on meanwhile
            log.exception("looking for a host's wanters failed", extra={"host": host})
            return
        holding.others = len(wanters - {self._me})
        holding.looked_at = now

    def _idle_slot(self, host: str, now: datetime) -> bool:
        """A warm slot of ``host`` unused for ``wanting_idle_s``: no lane here waits for it."""
        return any(w.idle_since + self._wanting_idle <= now for w in self._warm.get(host, []))

    def _wants(self, host: str, now: datetime) -> bool:
        said = self._wanted_at.get(host)
        return said is not None and now < said + self._want

    async def _withdraw_want(self, host: str, now: datetime) -> None:
        """This process stopped wanting ``host``: end its posted want now (one write), so
        that holders of the host need not keep to a share for it until the want runs out."""
        said = self._wanted_at.pop(host, None)
        if said is None or now >= said + self._want:
            return  # never said, or run out by itself
        try:
            await self._inner.want(host, self._me, now)
        except Exception:  # it runs out by itself within want_s
            log.exception("withdrawing a host want failed", extra={"host": host})

    async def _say_wanted(self, host: str, now: datetime) -> None:
        """Tell the other processes this one waits for ``host`` (at most every ``want_s / 3``)."""
        said = self._wanted_at.get(host)
        if said is not None and now < said + self._want / 3:
            return
        self._wanted_at[host] = now
        if len(self._wanted_at) > WANTS_KEPT:
            self._wanted_at = {h: t for h, t in self._wanted_at.items() if now < t + self._want}
        try:
            await self._inner.want(host, self._me, now + self._want)
        except Exception:  # only a fair share is at stake: the lane waits and asks again
            log.exception("saying a host is wanted failed", extra={"host": host})

    def _took(self, host: str, concurrency: int, now: datetime) -> None:
        holding = self._held.get(host)
        if holding is None:
            self._held[host] = _Holding(1, now, concurrency)
            self._start_sweeper()
        else:
            holding.count += 1
            holding.concurrency = concurrency

    def _gave_back(self, host: str) -> None:
        holding = self._held.get(host)
        if holding is not None:
            holding.count -= 1
            if holding.count <= 0:
                del self._held[host]
                self._ended.add(host)

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
                await self._give_back_one(slot.permit)

    async def _give_back_one(self, permit: Permit) -> None:
        self._gave_back(permit.host)
        try:
            await self._inner.release(permit)
        except Exception:  # its lease ends anyway; neither a fetch nor the sweeper should fail
            log.exception("giving a host slot back failed", extra={"host": permit.host})

    def _set_warm(self, host: str, warm: list[_WarmSlot]) -> None:
        if warm:
            self._warm[host] = warm
        else:
            self._warm.pop(host, None)

    def _start_sweeper(self) -> None:
        if self._sweeper is None or self._sweeper.done():
            # its own context: the store operations it makes are not the batch's that started it
            self._sweeper = asyncio.create_task(
                self._sweep_while_warm(), name="warm-slot-sweeper", context=contextvars.Context()
            )

    async def _sweep_while_warm(self) -> None:
        while self._warm or self._held:
            contended = any(holding.others for holding in self._held.values())
            pause = self._policy.contended_idle_s if contended else self._policy.idle_s / 2
            await asyncio.sleep(min(pause, self._policy.check_s))
            with counting() as ops:
                await self.sweep()
            if ops.reads or ops.writes:  # looks for wanters, slots given back, wants withdrawn
                log.info(
                    SWEPT,
                    extra={"firestore_reads": ops.reads, "firestore_writes": ops.writes},
                )


def _free_for_others(permit: Permit, now: datetime) -> bool:
    """Given back now, the slot would be free for others at once (not resting)."""
    return permit.free_at is None or permit.free_at <= now


def _serves(warm: _WarmSlot, limits: HostLimits, lease_until: datetime) -> bool:
    """The warm slot's lease covers a fetch leased until ``lease_until``, and its number is
    within the job's concurrency."""
    return warm.lease_until >= lease_until and warm.permit.slot < limits.concurrency
