"""Politeness toward each host, across every worker instance: robots.txt, concurrency, spacing
(per-host rate, Crawl-delay, Retry-After) and a circuit breaker that pauses failing hosts."""

from __future__ import annotations

import asyncio
import collections
import contextlib
from dataclasses import dataclass, field
from datetime import timedelta

from scrapejobs_shared.config.settings import DEFAULT_USER_AGENT
from scrapejobs_shared.domain.clock import Clock
from scrapejobs_shared.domain.jobspec import JobOptions
from scrapejobs_shared.observability.phase_timer import phase
from scrapejobs_shared.options import JOB_PACE, PROXY, TLS
from scrapejobs_shared.options.proxy_pools import ProxyChoice
from scrapejobs_shared.politeness.fair_places import RANKS, FairPlaces, rank_of
from scrapejobs_shared.politeness.host_gate import (
    BreakerPolicy,
    HostGate,
    HostLimits,
    Permit,
    Throttle,
)
from scrapejobs_shared.politeness.robots_cache import RobotsCache
from scrapejobs_shared.ports.fetcher import FetchRoute


@dataclass(frozen=True, slots=True)
class PolitenessPolicy:
    per_host_concurrency: int = 8
    per_host_rps: float = 0.0  # 0: no spacing unless a job or robots.txt asks for it
    max_wait_s: float = 10.0  # wait this long in-request for the host before deferring
    breaker: BreakerPolicy = field(default_factory=BreakerPolicy)
    user_agent: str = DEFAULT_USER_AGENT
    # the proxies a job that asks for none goes through (SCRAPEJOBS_PROXY_DEFAULT; None: direct)
    default_proxy: ProxyChoice | None = None


@dataclass(frozen=True, slots=True)
class RobotsVerdict:
    allowed: bool
    crawl_delay_s: float | None = None


# The longest pause between a process's asks of a full host: a slot another process gives back
# (its share, or idle) is found within it. Asks cost the store 2-3 reads; a process holding its
# share while others wait is refused in-process, for nothing (WarmSlotGate).
MAX_FULL_BACKOFF_S = 0.5


class HostQueue:
    """This process's queue for one host: at most the host's concurrency pass at once; a lane
    that finds a slot of the host idle in this process (warm) takes it at once; the others ask
    the shared gate one at a time (a fresh slot costs the store a read of up to the host's slot
    count in documents); and while the gate says the host is full, they wait out one shared,
    growing pause instead of each polling the store. A permit given back here ends the pause:
    its slot is warm for the next lane. The queue is dropped when nobody is in it, so a broad
    crawl does not keep one per host ever seen.

    A warm slot is taken without the turn to ask (``HostGate.take_warm``): while one lane's
    ask of the store was under way, slots given back here sat idle behind it, and A's lanes
    waited 12-16 ms a page for the turn while 1.2-1.4 of the host's 8 slots were busy
    (bench/README.md, "Where A waits")."""

    def __init__(self, queues: dict[tuple[str, int], HostQueue], key: tuple[str, int]) -> None:
        self._queues = queues
        self._key = key
        self._places = FairPlaces(key[1])
        self._users = 0
        self._paused_until = 0.0  # loop time
        self._pause_reason = "concurrency"  # the gate's reason for the pause
        self._backoff_s = 0.0
        self._waiters: collections.deque[asyncio.Future[None]] = collections.deque()
        self._asking = asyncio.Lock()
        # permits given back here and not yet taken again: their slots are warm for this
        # process, so no pause applies until a lane has asked for them
        self._handed_over = 0

    @classmethod
    def join(cls, queues: dict[tuple[str, int], HostQueue], key: tuple[str, int]) -> HostQueue:
        queue = queues.get(key) or queues.setdefault(key, cls(queues, key))
        queue._users += 1
        return queue

    async def enter(self, wait_s: float, tenant: str = "", rank: int = RANKS["normal"]) -> bool:
        """A place in this process's line for the host, taken in turns by tenant (by ``rank``
        within a tenant)."""
        return await self._places.acquire(tenant, wait_s, rank)

    async def ask(self, deadline: float) -> bool:
        """Become the lane that asks the gate next (False at ``deadline``)."""
        return await _take(self._asking, deadline - asyncio.get_running_loop().time())

    def asked(self) -> None:
        self._asking.release()

    def paused_past(self, deadline: float) -> Throttle | None:
        """The host's pause, when it lasts past ``deadline`` and no permit was given back
        here: waiting cannot end in a permit, so the lane defers at once (its push is not
        held for nothing) and its batch waits out the pause unpublished."""
        if self._handed_over or self._paused_until <= deadline:
            return None
        wait_s = self._paused_until - asyncio.get_running_loop().time()
        return Throttle(wait_s, self._pause_reason)

    async def turn(self, deadline: float) -> None:
        """Wait out the host's pause (or until a local permit is given back, or ``deadline``)."""
        loop = asyncio.get_running_loop()
        pause = min(self._paused_until, deadline) - loop.time()
        if pause <= 0 or self._handed_over:
            return
        waiter: asyncio.Future[None] = loop.create_future()
        self._waiters.append(waiter)
        try:
            await asyncio.wait_for(waiter, timeout=pause)
        except TimeoutError:
            pass
        finally:
            with contextlib.suppress(ValueError):
                self._waiters.remove(waiter)

    def refused(self, throttle: Throttle) -> float:
        """The gate refused: the pause every lane of this process now waits, in seconds. A
        permit given back while this ask was under way is not paused for: the next lane asks
        at once (the slot is warm here, unless it went back to the store)."""
        if self._handed_over:
            self._handed_over = 0  # asked since, and refused: the slot is not here any more
            return 0.0
        if throttle.reason == "concurrency":
            self._backoff_s = min(max(throttle.wait_s, self._backoff_s * 2), MAX_FULL_BACKOFF_S)
            wait_s = self._backoff_s
        else:  # a rate interval, a breaker, a Retry-After hold: the gate says how long
            wait_s = max(throttle.wait_s, 0.02)
        self._pause_reason = throttle.reason
        self._paused_until = max(self._paused_until, asyncio.get_running_loop().time() + wait_s)
        return wait_s

    def granted(self) -> None:
        """A lane got a permit: a slot handed over here (the pause between asks of the
        store stays as it was: this process is still short of slots), else a fresh one."""
        if self._handed_over:
            self._handed_over -= 1
        else:
            self._backoff_s = 0.0

    def release(self) -> None:
        """A permit of this process was given back: one waiting lane may take its slot."""
        if self._waiters or self._users > 1:
            self._handed_over += 1
        if self._waiters:
            self._paused_until = 0.0
            waiter = self._waiters.popleft()
            if not waiter.done():
                waiter.set_result(None)
        self.give_up()

    def give_up(self) -> None:
        """Leave the queue without a permit."""
        self._places.release()
        self.leave()

    def leave(self) -> None:
        self._users -= 1
        if self._users == 0 and self._queues.get(self._key) is self:
            del self._queues[self._key]


async def _take(lock: asyncio.Lock, timeout_s: float) -> bool:
    """Acquire within ``timeout_s`` (at once or not at all when it is not positive)."""
    if timeout_s <= 0:
        if lock.locked():
            return False
        await lock.acquire()  # free: returns without waiting
        return True
    try:
        async with asyncio.timeout(timeout_s):  # no task per call, unlike wait_for
            await lock.acquire()
    except TimeoutError:
        return False
    return True


class HeldPermit:
    """A granted permit, released exactly once (right after the fetch, or on any early exit),
    with this process's place in the host's queue."""

    def __init__(self, gate: HostGate, permit: Permit, place: HostQueue) -> None:
        self._gate = gate
        self.permit = permit
        self._place = place
        self._released = False

    async def release(self) -> None:
        if not self._released:
            self._released = True
            try:
                with phase("release"):
                    await self._gate.release(self.permit)
            finally:
                self._place.release()


class Politeness:
    def __init__(
        self, gate: HostGate, robots: RobotsCache, policy: PolitenessPolicy, clock: Clock
    ) -> None:
        self._gate = gate
        self._robots = robots
        self._policy = policy
        self._clock = clock
        # Coroutines of this process wanting the same host queue here, at most the host's
        # concurrency at the shared gate at once: waiting costs no store reads, and the slots
        # this process holds warm pass from one fetch to the next.
        self._queues: dict[tuple[str, int], HostQueue] = {}

    async def robots(self, url: str, options: JobOptions, tenant: str | None) -> RobotsVerdict:
        if not JOB_PACE.of(options).respect_robots:
            return RobotsVerdict(True)
        rules = await self._robots.rules_for(url, self.route(options, tenant))
        agent = self._policy.user_agent
        return RobotsVerdict(rules.allows(url, agent), rules.crawl_delay(agent))

    async def sitemaps(self, url: str, options: JobOptions, tenant: str | None) -> list[str]:
        """The sitemaps the robots.txt of ``url``'s site names."""
        return (await self._robots.rules_for(url, self.route(options, tenant))).sitemaps

    def route(
        self, options: JobOptions, tenant: str | None, session: str | None = None
    ) -> FetchRoute:
        """How a job's requests to a site travel: its pages', its robots.txt's and its
        sitemaps', so the site sees one route (options/proxy.py, options/tls.py)."""
        proxy = PROXY.choice(options) or self._policy.default_proxy
        return FetchRoute(TLS.of(options), proxy, tenant, session)

    def limits(self, options: JobOptions, crawl_delay_s: float | None) -> HostLimits:
        """The host's own pace, shared by every job of the host: the deployment's rate and
        the site's ``Crawl-delay`` (capped when read). A job's slower ``per_host_rps`` is its
        own (``job_pace``), never the host's."""
        rps = self._policy.per_host_rps
        interval = max(1.0 / rps if rps else 0.0, crawl_delay_s or 0.0)
        concurrency = JOB_PACE.of(options).concurrency or self._policy.per_host_concurrency
        return HostLimits(concurrency=concurrency, min_interval_s=interval)

    async def admit(
        self,
        host: str,
        limits: HostLimits,
        lease: timedelta,
        max_wait_s: float | None = None,
        tenant: str = "",
        lane: str = "normal",
    ) -> HeldPermit | Throttle:
        """A permit leased for ``lease`` from when it is granted, waiting up to the policy's
        ``max_wait_s`` (or less: the caller's ``max_wait_s``) in this process's queue and at
        the shared gate; else the throttle to defer the task by. The lanes of several tenants
        waiting for the host in this process take its places in turns, and within a tenant the
        job's priority ``lane`` goes first (``FairPlaces``)."""
        wait_s = self._policy.max_wait_s
        if max_wait_s is not None:
            wait_s = min(wait_s, max_wait_s)
        loop = asyncio.get_running_loop()
        deadline = loop.time() + max(wait_s, 0.0)
        place = HostQueue.join(self._queues, (host, limits.concurrency))
        entered = await self._enter(place, host, limits, lease, wait_s, tenant, lane)
        if entered is not None:
            return entered
        held: HeldPermit | None = None
        try:
            while held is None:
                if not await place.ask(deadline):
                    place.give_up()
                    return Throttle(0.0, "concurrency")
                try:
                    result = place.paused_past(deadline)
                    if result is not None:
                        pause_s = result.wait_s
                    else:
                        await place.turn(deadline)
                        now = self._clock()
                        answer = await self._gate.acquire(host, limits, now + lease, now)
                        if isinstance(answer, Permit):
                            place.granted()
                            held = HeldPermit(self._gate, answer, place)
                            continue
                        result, pause_s = answer, place.refused(answer)
                finally:
                    place.asked()
                if pause_s > deadline - loop.time():
                    place.give_up()
                    return result
        except BaseException:
            place.give_up()
            raise
        await self._until_start(held)
        return held

    async def _until_start(self, held: HeldPermit) -> None:
        """A fast pace's instant (``Permit.starts_at``, pace_grid.py), waited for once the
        turn to ask the gate is handed on: the next lane asks for its own instant meanwhile."""
        starts_at = held.permit.starts_at
        wait_s = 0.0 if starts_at is None else (starts_at - self._clock()).total_seconds()
        if wait_s <= 0:
            return
        try:
            await asyncio.sleep(wait_s)
        except BaseException:
            await held.release()
            raise

    async def _enter(
        self,
        place: HostQueue,
        host: str,
        limits: HostLimits,
        lease: timedelta,
        wait_s: float,
        tenant: str,
        lane: str,
    ) -> HeldPermit | Throttle | None:
        """A place in this process's line for ``host`` (a throttle when none came within
        ``wait_s``) and, with it, a slot this process holds idle when there is one: taken at
        once, with no turn to ask the store. None: the lane has its place and asks."""
        try:
            entered = await place.enter(wait_s, tenant, rank_of(lane))
        except BaseException:
            place.leave()
            raise
        if not entered:
            place.leave()
            return Throttle(0.0, "concurrency")
        now = self._clock()
        warm = self._gate.take_warm(host, limits, now + lease, now)
        if warm is None:
            return None
        place.granted()
        return HeldPermit(self._gate, warm, place)

    async def host_responded(self, permit: Permit) -> None:
        await self._gate.record_success(permit, self._clock())

    async def host_failed(self, host: str) -> None:
        await self._gate.record_failure(host, self._policy.breaker, self._clock())

    async def host_throttled(self, host: str, retry_after_s: float) -> None:
        await self._gate.hold(host, self._clock() + timedelta(seconds=retry_after_s))
