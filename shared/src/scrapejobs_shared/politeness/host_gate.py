"""Per-host politeness shared by every worker instance: concurrency slots, request spacing
(rate, Crawl-delay, Retry-After) and a circuit breaker. The port and its value types."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Any, Protocol


@dataclass(frozen=True, slots=True)
class HostLimits:
    concurrency: int  # fetches in flight for the host, across all instances
    min_interval_s: float = 0.0  # spacing between request starts (rps, Crawl-delay); 0 = none


@dataclass(frozen=True, slots=True)
class BreakerPolicy:
    failure_threshold: int = 5  # consecutive host-level failures that open the circuit
    cooldown_s: float = 60.0  # how long an open circuit pauses the host


@dataclass(frozen=True, slots=True)
class Permit:
    host: str
    slot: int
    token: Any  # adapter-specific proof of ownership (e.g. the slot's update time)
    failures: int = 0  # consecutive failures seen when the permit was granted
    # a fast pace's instant (pace_grid.py): the request must not start before it (None: now)
    starts_at: datetime | None = None
    # given back, the slot is free for others from then (its rest: ``slot_free_at``); None or
    # past: at once. A process's own gate keeps a slot that would rest (warm_slot_gate.py)
    free_at: datetime | None = None


@dataclass(frozen=True, slots=True)
class Throttle:
    wait_s: float
    reason: str  # concurrency | share (held in-process: WarmSlotGate) | rate | circuit_open


@dataclass(frozen=True, slots=True)
class HostSignals:
    """What the host document says, without counting slots: the cheap read."""

    next_at: datetime | None = None  # no request starts before (spacing, Retry-After)
    open_until: datetime | None = None  # circuit open until
    failures: int = 0  # consecutive host-level failures

    def throttle(self, now: datetime) -> Throttle | None:
        """The pause in force at ``now``, if any."""
        if self.open_until and self.open_until > now:
            return Throttle((self.open_until - now).total_seconds(), "circuit_open")
        if self.next_at and self.next_at > now:
            return Throttle((self.next_at - now).total_seconds(), "rate")
        return None


@dataclass(frozen=True, slots=True)
class PausedHost:
    """A host no fetch may start on now: its breaker is open, or a Retry-After (or a pace
    slower than ``PAUSE_AFTER``) holds it."""

    host: str
    until: datetime
    reason: str  # "circuit_open" | "held"


PAUSE_AFTER = timedelta(seconds=5)  # a hold shorter than this is ordinary pacing
# A slot's document takes at most ``SLOT_TAKES`` takes in any ``SLOT_WINDOW``, so that none goes
# above Firestore's sustained write a second: a look at any 10 s finds at most 4 takes and 5
# give-backs. The document keeps its last takes' times; a slot given back after its fourth
# take in the window rests until the oldest is ``SLOT_WINDOW`` old. So a slot may change hands
# four times at once (two processes taking one host's slots by turns at batch boundaries, a
# one-URL job's page), and then once every 2.5 s on average. A process keeping a slot warm for
# fetch after fetch never waits for it; a host whose pages are spread one by one over many
# instances gets at most ``concurrency`` fresh takes every 2.5 s once its slots' bursts are
# spent (``make scale``: the one-URL jobs of 100 tenants over 200 instances, and monitors'
# short batches, had slot documents refusing writes). A rest of 2.5 s after every short use
# held that too, but cost two worker processes sharing one host (bench A) three quarters of
# their pages a second: their turns hand a slot over within a second.
SLOT_TAKES = 4
SLOT_WINDOW = timedelta(seconds=10)
HOST_KEY_SCHEMES = ("http~", "https~")  # how a host key begins (host_key.py)


@dataclass(frozen=True, slots=True)
class HostState:
    host: str
    next_at: datetime | None
    open_until: datetime | None
    failures: int
    in_flight: int


def slot_takes(earlier: Sequence[datetime], now: datetime) -> tuple[datetime, ...]:
    """The take times a slot's document keeps after a take at ``now``: its last
    ``SLOT_TAKES``."""
    return (*earlier, now)[-SLOT_TAKES:]


def slot_free_at(takes: Sequence[datetime]) -> datetime:
    """When a slot given back after ``takes`` (``slot_takes``) is free again: once the oldest
    is ``SLOT_WINDOW`` old if it has had ``SLOT_TAKES`` of them, else from its last take
    (at once)."""
    if len(takes) < SLOT_TAKES:
        return takes[-1]
    return max(takes[-1], takes[0] + SLOT_WINDOW)


class HostGate(Protocol):
    async def acquire(
        self, host: str, limits: HostLimits, lease_until: datetime, now: datetime
    ) -> Permit | Throttle: ...

    def take_warm(
        self, host: str, limits: HostLimits, lease_until: datetime, now: datetime
    ) -> Permit | None:
        """A slot of ``host`` this process already holds and is not using, at once, with no
        call to the store (None: none, or this gate keeps no slots: a store's own gate). The
        store is never asked here, so callers need not take turns for it as for
        :meth:`acquire`."""

    async def release(self, permit: Permit) -> None:
        """Give the slot back: free at once, or after its rest (``slot_free_at``)."""

    async def take_instant(
        self, host: str, limits: HostLimits, now: datetime
    ) -> datetime | Throttle:
        """An instant of a fast pace's grid (pace_grid.py) for a slot the caller already
        holds (a warm one): the request starts at it. ``now`` when the pace has no grid."""

    async def record_success(self, permit: Permit, now: datetime) -> None:
        """Close the breaker's failure streak (writes only when there was one)."""

    async def record_failure(self, host: str, policy: BreakerPolicy, now: datetime) -> None: ...

    async def hold(self, host: str, until: datetime) -> None:
        """No request to the host starts before ``until`` (Retry-After)."""

    async def close_breaker(self, host: str, now: datetime) -> bool:
        """An explicit replay says "try again now": the host's breaker closes (its failure
        streak too); True when it was open at ``now``. Failures afterwards reopen it."""

    async def signals(self, host: str) -> HostSignals: ...

    async def state(self, host: str, now: datetime) -> HostState: ...

    async def paused(self, now: datetime, limit: int) -> list[PausedHost]:
        """Hosts paused at ``now`` (at most ``limit``), the longest pause first."""

    async def want(self, host: str, wanter: str, until: datetime) -> None:
        """``wanter`` (a worker process) waits for a slot of ``host`` until ``until``; holders
        that see it keep no more than their share of the host's slots."""

    async def wanting(self, host: str, now: datetime) -> frozenset[str]:
        """The wanters of ``host`` whose want lasts beyond ``now`` (at most ``WANTERS_READ``)."""


class StoreSlots:
    """A store's own gate: every slot is the store's, none is kept in a process (so none is
    ever warm)."""

    def take_warm(
        self, host: str, limits: HostLimits, lease_until: datetime, now: datetime
    ) -> Permit | None:
        return None


WANTERS_READ = 32  # wanters one look returns: beyond it, a share is already one slot or none


def merge_paused(paused: list[PausedHost], limit: int) -> list[PausedHost]:
    """One entry per host (its longest pause), longest first; the gate's other keys (a
    tenant's pages in flight, a job's own pace) are not hosts and are left out."""
    longest: dict[str, PausedHost] = {}
    for entry in paused:
        if not entry.host.startswith(HOST_KEY_SCHEMES):
            continue
        if entry.host not in longest or entry.until > longest[entry.host].until:
            longest[entry.host] = entry
    return sorted(longest.values(), key=lambda p: p.until, reverse=True)[:limit]
