"""robots.txt per origin, fetched through the same safe fetcher, cached, one fetch at a time.

Fetched with the site's certificate verified, as the pages of a job that verifies are: rules
read over a connection anyone could have answered would let them steer the fetches. A job that
fetches without verifying (``options.verify_tls`` false, its own choice) reads the rules the
same way, and those are cached apart: they never serve a job that verifies. A certificate that
fails verification reads as no rules (nothing is read from the site: the page's own fetch then
fails for that reason, not robots_disallowed)."""

from __future__ import annotations

import asyncio
import logging
import time
from collections import OrderedDict

from scrapejobs_shared.politeness.host_key import host_key, robots_url
from scrapejobs_shared.politeness.robots_rules import (
    ROBOTS_CACHE_TTL_S,
    RobotsRules,
    rules_for_response,
)
from scrapejobs_shared.ports.fetcher import (
    DIRECT,
    BlockedDestination,
    Fetcher,
    FetchError,
    FetchRequest,
    FetchRoute,
)

log = logging.getLogger(__name__)
TLS_ERROR = "tls_error"  # the safe fetcher's reason for a certificate that failed verification
FAILURE_TTL_S = 60.0  # an unreachable robots.txt is asked again soon, not after a day


RobotsKey = tuple[str, FetchRoute]  # the host, the route (FetchRoute.shared)


class RobotsCache:
    def __init__(
        self, fetcher: Fetcher, *, timeout_s: float = 10.0, max_entries: int = 10_000
    ) -> None:
        self._fetcher = fetcher
        self._timeout_s = timeout_s
        self._max = max_entries
        self._entries: OrderedDict[RobotsKey, tuple[float, RobotsRules]] = OrderedDict()
        self._pending: dict[RobotsKey, asyncio.Future[RobotsRules]] = {}

    async def rules_for(self, url: str, route: FetchRoute = DIRECT) -> RobotsRules:
        """The rules of ``url``'s site, read as the job reads the site (its certificate checks,
        through its proxies: a site may answer one route and not another)."""
        key = (host_key(url), route.shared())
        cached = self._entries.get(key)
        if cached is not None and cached[0] > time.monotonic():
            return cached[1]
        pending = self._pending.get(key)
        if pending is not None:
            return await asyncio.shield(pending)
        future: asyncio.Future[RobotsRules] = asyncio.get_running_loop().create_future()
        self._pending[key] = future
        try:
            rules, ttl = await self._fetch(url, key[1])
            self._store(key, rules, ttl)
            future.set_result(rules)
            return rules
        except BaseException as exc:
            future.set_exception(exc)
            future.exception()  # mark retrieved: waiters re-raise it themselves
            raise
        finally:
            del self._pending[key]

    async def _fetch(self, url: str, route: FetchRoute) -> tuple[RobotsRules, float]:
        try:
            request = FetchRequest(robots_url(url), {}, self._timeout_s, route=route)
            response = await self._fetcher.fetch(request)
        except BlockedDestination:
            raise  # the page itself is refused, never "disallowed" (and never cached)
        except FetchError as exc:
            if exc.reason == TLS_ERROR:
                # the site's certificate fails: nothing of it is read, and the page's own
                # fetch fails with that reason (rather than robots_disallowed)
                return RobotsRules.parse(b""), FAILURE_TTL_S
            log.info("robots.txt unreachable", extra={"url": url, "reason": exc.reason})
            return rules_for_response(None, b""), FAILURE_TTL_S
        rules = rules_for_response(response.status, response.body)
        ttl = ROBOTS_CACHE_TTL_S if response.status < 500 else FAILURE_TTL_S
        return rules, ttl

    def _store(self, key: RobotsKey, rules: RobotsRules, ttl: float) -> None:
        self._entries[key] = (time.monotonic() + ttl, rules)
        self._entries.move_to_end(key)
        if len(self._entries) > self._max:
            self._entries.popitem(last=False)
