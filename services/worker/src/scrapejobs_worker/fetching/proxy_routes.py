"""Which proxy a fetch goes through: the proxies serving its choice (tier and country), in turn
(round robin, per choice), or, for a sticky key (a job and a host), always from the same one
while it is up; a proxy that failed (unreachable, or refusing the tunnel) is benched for a
while, tried again only after every proxy still up. Counts per proxy, by its label."""

from __future__ import annotations

import hashlib
import time
from collections.abc import Callable
from dataclasses import dataclass

from scrapejobs_shared.options.proxy_pools import ProxyChoice, ProxyPool, ProxyServer

# the deployment's own route: its basic pool, or direct where it has none (options/proxy.py)
OWN_ROUTE = ProxyChoice("basic")


@dataclass(slots=True)
class ProxyCounts:
    served: int = 0  # hops that went through it
    failed: int = 0  # times it could not be reached or refused the tunnel


class ProxyRoutes:
    def __init__(
        self, pool: ProxyPool, bench_s: float, clock: Callable[[], float] = time.monotonic
    ) -> None:
        self._pool = pool
        self._bench_s = bench_s
        self._clock = clock
        self._turns: dict[ProxyChoice, int] = {}
        self._benched: dict[str, float] = {}  # label -> until (clock)
        self.counts: dict[str, ProxyCounts] = {s.label: ProxyCounts() for s in pool.servers}

    def candidates(
        self, choice: ProxyChoice, sticky: str | None = None
    ) -> tuple[ProxyServer, ...] | None:
        """The proxies to try, in order; None: direct (the own route where no basic pool is
        configured); empty: none serves ``choice`` (never direct instead). ``sticky``: the
        same first proxy for the same key, in every process."""
        servers = self._pool.serving(choice)
        if not servers:
            return None if choice == OWN_ROUTE else ()
        if sticky is None:
            turn = self._turns.get(choice, 0)
            self._turns[choice] = turn + 1
        else:
            turn = int.from_bytes(hashlib.blake2b(sticky.encode(), digest_size=4).digest())
        start = turn % len(servers)
        rotated = servers[start:] + servers[:start]
        now = self._clock()
        up = tuple(s for s in rotated if self._benched.get(s.label, 0.0) <= now)
        return up + tuple(s for s in rotated if s not in up)

    def failed(self, server: ProxyServer) -> None:
        self._benched[server.label] = self._clock() + self._bench_s
        self.counts[server.label].failed += 1

    def served(self, server: ProxyServer) -> None:
        self._benched.pop(server.label, None)
        self.counts[server.label].served += 1
