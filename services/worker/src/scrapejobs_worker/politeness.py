"""Politeness toward each host, across every worker instance: robots.txt, concurrency, spacing
(per-host rate, Crawl-delay, Retry-After) and a circuit breaker that pauses failing hosts."""

from __future__ import annotations

import asyncio
from dataclasses import dataclass, field
from datetime import timedelta

from scrapejobs_shared.domain.clock import Clock
from scrapejobs_shared.domain.jobspec import JobOptions
from scrapejobs_shared.ports.host_gate import BreakerPolicy, HostGate, HostLimits, Permit, Throttle
from scrapejobs_worker.phase_timer import phase
from scrapejobs_worker.robots_cache import RobotsCache


@dataclass(frozen=True, slots=True)
class PolitenessPolicy:
    per_host_concurrency: int = 8
    per_host_rps: float = 0.0  # 0: no spacing unless a job or robots.txt asks for it
    max_wait_s: float = 10.0  # wait this long in-request for the host before deferring
    breaker: BreakerPolicy = field(default_factory=BreakerPolicy)
    user_agent: str = "scrapejobs"


@dataclass(frozen=True, slots=True)
class RobotsVerdict:
    allowed: bool
    crawl_delay_s: float | None = None


class HeldPermit:
    """A granted permit, released exactly once (right after the fetch, or on any early exit)."""

    def __init__(self, gate: HostGate, permit: Permit) -> None:
        self._gate = gate
        self.permit = permit
        self._released = False

    async def release(self) -> None:
        if not self._released:
            self._released = True
            with phase("release"):
                await self._gate.release(self.permit)


class Politeness:
    def __init__(
        self, gate: HostGate, robots: RobotsCache, policy: PolitenessPolicy, clock: Clock
    ) -> None:
        self._gate = gate
        self._robots = robots
        self._policy = policy
        self._clock = clock

    async def robots(self, url: str, options: JobOptions) -> RobotsVerdict:
        if not options.respect_robots:
            return RobotsVerdict(True)
        rules = await self._robots.rules_for(url)
        agent = self._policy.user_agent
        return RobotsVerdict(rules.allows(url, agent), rules.crawl_delay(agent))

    def limits(self, options: JobOptions, crawl_delay_s: float | None) -> HostLimits:
        rps = options.per_host_rps or self._policy.per_host_rps
        interval = max(1.0 / rps if rps else 0.0, crawl_delay_s or 0.0)
        concurrency = options.per_host_concurrency or self._policy.per_host_concurrency
        return HostLimits(concurrency=concurrency, min_interval_s=interval)

    async def admit(self, host: str, limits: HostLimits, lease: timedelta) -> Permit | Throttle:
        """A permit leased for ``lease`` from when it is granted, waiting up to ``max_wait_s``;
        else the throttle to defer the task by."""
        deadline = asyncio.get_running_loop().time() + self._policy.max_wait_s
        while True:
            now = self._clock()
            result = await self._gate.acquire(host, limits, now + lease, now)
            if isinstance(result, Permit):
                return result
            remaining = deadline - asyncio.get_running_loop().time()
            if result.wait_s > remaining:
                return result
            await asyncio.sleep(max(result.wait_s, 0.02))

    def hold(self, permit: Permit) -> HeldPermit:
        return HeldPermit(self._gate, permit)

    async def host_responded(self, permit: Permit) -> None:
        await self._gate.record_success(permit, self._clock())

    async def host_failed(self, host: str) -> None:
        await self._gate.record_failure(host, self._policy.breaker, self._clock())

    async def host_throttled(self, host: str, retry_after_s: float) -> None:
        await self._gate.hold(host, self._clock() + timedelta(seconds=retry_after_s))
