"""Which proxy a fetch goes through: the proxies of its route's pool (its tenant's own, else the
deployment's: shared tenant_pools.py) serving its choice (tier and country), in turn (round
robin, per pool and choice), or, for a sticky key (a job and a host), always from the same one
while it is up; a proxy that failed (unreachable, or refusing the tunnel) is benched for a
while, tried again only after every proxy still up. Counts per proxy, by its label."""

from __future__ import annotations

import hashlib
import time
from collections.abc import Callable
from dataclasses import dataclass

from scrapejobs_shared.options.proxy_pools import ProxyChoice, ProxyServer
from scrapejobs_shared.ports.fetcher import FetchRoute
from scrapejobs_shared.tenant_pools import ProxyPools

# the deployment's own route: its basic pool, or direct where it has none (options/proxy.py)
OWN_ROUTE = ProxyChoice("basic")


@dataclass(slots=True)
class ProxyCounts:
    served: int = 0  # hops that went through it
    failed: int = 0  # times it could not be reached or refused the tunnel


class ProxyRoutes:
    def __init__(
        self, pools: ProxyPools, bench_s: float, clock: Callable[[], float] = time.monotonic
    ) -> None:
        self._pools = pools
        self._bench_s = bench_s
        self._clock = clock
        self._turns: dict[tuple[str | None, ProxyChoice], int] = {}
        self._benched: dict[str, float] = {}  # label -> until (clock)
        self.counts: dict[str, ProxyCounts] = {
            s.label: ProxyCounts() for s in pools.deployment.servers
        }

    async def candidates(
        self, route: FetchRoute, sticky: str | None = None
    ) -> tuple[ProxyServer, ...] | None:
        """The proxies to try, in order; None: direct (no proxy asked, or the own route where
        the pool has no basic proxy); empty: none serves the route's choice (never direct
        instead). ``sticky``: the same first proxy for the same key, in every process."""
        choice = route.proxy
        if choice is None:
            return None
        pool = await self._pools.pool_of(route.tenant)
        servers = pool.serving(choice)
        if not servers:
            return None if choice == OWN_ROUTE else ()
        if sticky is None:
            turns = (pool.owner, choice)
            turn = self._turns.get(turns, 0)
            self._turns[turns] = turn + 1
        else:
            turn = int.from_bytes(hashlib.blake2b(sticky.encode(), digest_size=4).digest())
        start = turn % len(servers)
        rotated = servers[start:] + servers[:start]
        now = self._clock()
        up = tuple(s for s in rotated if self._benched.get(s.label, 0.0) <= now)
        return up + tuple(s for s in rotated if s not in up)

    def failed(self, server: ProxyServer) -> None:
        self._benched[server.label] = self._clock() + self._bench_s
        self.counts.setdefault(server.label, ProxyCounts()).failed += 1

    def served(self, server: ProxyServer) -> None:
        self._benched.pop(server.label, None)
        self.counts.setdefault(server.label, ProxyCounts()).served += 1
