"""Which proxy a fetch goes through (fetching/proxy_routes.py): round robin within the proxies
serving a choice; a proxy that failed is benched, tried only after every proxy still up, until
its time is out; the deployment's own route is direct where no basic pool is configured, any
other choice no proxy serves is never direct. A tenant with a pool of its own goes through it
alone, and no other tenant does. And the aiohttp method the tunnels override
(fetching/tunnel_connector.py) still takes what they rely on."""

from __future__ import annotations

import inspect
import json
from collections.abc import Callable

import aiohttp

from scrapejobs_shared.adapters.memory.tenant_proxies import MemoryTenantProxies
from scrapejobs_shared.options.proxy_pools import ProxyChoice, ProxyPool, ProxyServer, parse_pool
from scrapejobs_shared.ports.fetcher import FetchRoute
from scrapejobs_shared.tenant_pools import ProxyPools
from scrapejobs_worker.fetching.proxy_routes import ProxyRoutes

POOL = parse_pool(
    json.dumps(
        [
            {"url": "http://a.example:1", "country": "DE"},
            {"url": "http://b.example:1", "country": "DE"},
            {"url": "http://c.example:1", "country": "US"},
            {"url": "socks5://s.example:1", "tier": "stealth"},
        ]
    )
)
A, B, C, S = POOL.servers
DE = ProxyChoice("basic", "DE")


def routes_of(pool: ProxyPool, clock: Callable[[], float] = lambda: 0.0) -> ProxyRoutes:
    return ProxyRoutes(ProxyPools(pool), bench_s=30, clock=clock)


async def candidates(
    routes: ProxyRoutes, choice: ProxyChoice, sticky: str | None = None, tenant: str | None = None
) -> tuple[ProxyServer, ...] | None:
    return await routes.candidates(FetchRoute(proxy=choice, tenant=tenant), sticky)


async def test_proxies_serving_a_choice_take_turns() -> None:
    routes = routes_of(POOL)
    assert [await candidates(routes, DE) for _ in range(3)] == [(A, B), (B, A), (A, B)]
    assert await candidates(routes, ProxyChoice()) == (A, B, C)
    assert await candidates(routes, ProxyChoice("stealth")) == (S,)


async def test_a_failed_proxy_is_tried_after_those_up_until_its_bench_is_over() -> None:
    now = [0.0]
    routes = routes_of(POOL, lambda: now[0])
    routes.failed(A)
    assert await candidates(routes, DE) == (B, A) and await candidates(routes, DE) == (B, A)
    now[0] = 31.0
    assert await candidates(routes, DE) == (A, B)
    routes.failed(B)
    routes.served(B)  # it answered again: no longer benched
    assert await candidates(routes, DE) == (B, A)
    assert (routes.counts[A.label].failed, routes.counts[B.label].served) == (1, 1)


async def test_the_own_route_is_direct_without_a_basic_pool_and_nothing_else_is() -> None:
    stealth_only = parse_pool(json.dumps([{"url": "http://s.example:1", "tier": "stealth"}]))
    routes = routes_of(stealth_only)
    assert await candidates(routes, ProxyChoice()) is None  # direct
    assert await candidates(routes, ProxyChoice("basic", "DE")) == ()  # never direct instead
    assert await candidates(routes_of(POOL), ProxyChoice("stealth", "FR")) == ()


def test_the_aiohttp_method_the_tunnels_override_takes_what_they_rely_on() -> None:
    """tunnel_connector.py overrides TCPConnector._wrap_create_connection (private): an aiohttp
    that calls it otherwise must fail here, not in production."""
    method = inspect.signature(aiohttp.TCPConnector._wrap_create_connection)
    keyword = {n for n, p in method.parameters.items() if p.kind is p.KEYWORD_ONLY}
    assert {"addr_infos", "req", "timeout", "client_error"} <= keyword
    caller = inspect.getsource(aiohttp.TCPConnector._create_direct_connection)
    for passed in ("ssl=sslcontext", "addr_infos=addr_infos", "server_hostname=server_hostname"):
        assert passed in caller, passed


async def test_a_sticky_key_keeps_to_one_proxy_while_it_is_up() -> None:
    now = [0.0]
    routes = routes_of(POOL, lambda: now[0])
    first = await candidates(routes, DE, "job-1 shop.example")
    assert first is not None
    for _ in range(5):
        assert await candidates(routes, DE, "job-1 shop.example") == first
    again = await candidates(routes_of(POOL), DE, "job-1 shop.example")
    assert again == first  # the same in every process
    keys = set()
    for n in range(20):
        found = await candidates(routes, DE, f"job-{n} shop.example")
        assert found is not None
        keys.add(found[0])
    assert keys == {A, B}  # sessions spread over the pool
    routes.failed(first[0])
    assert await candidates(routes, DE, "job-1 shop.example") == (first[1], first[0])


async def test_a_tenants_own_pool_serves_it_alone_instead_of_the_deployments() -> None:
    store = MemoryTenantProxies()
    own = parse_pool(json.dumps([{"url": "http://user:secret@fr.example:1", "country": "FR"}]))
    await store.set_pool("acme", own)
    routes = ProxyRoutes(ProxyPools(POOL, store), bench_s=30)
    fr = ProxyChoice("basic", "FR")
    assert await candidates(routes, fr, tenant="acme") == own.servers
    assert await candidates(routes, fr, tenant="other") == ()  # the deployment has no FR
    assert await candidates(routes, DE, tenant="acme") == ()  # never the deployment's instead
    assert await candidates(routes, DE, tenant="other") == (A, B)
    assert await candidates(routes, ProxyChoice(), tenant="acme") == own.servers
    # the deployment's turns are its own: acme's fetches took none of them
    assert await candidates(routes, DE, tenant="other") == (B, A)


async def test_a_tenant_without_a_basic_proxy_goes_its_own_route_direct() -> None:
    store = MemoryTenantProxies()
    stealth = parse_pool(json.dumps([{"url": "http://s.example:1", "tier": "stealth"}]))
    await store.set_pool("acme", stealth)
    routes = ProxyRoutes(ProxyPools(POOL, store), bench_s=30)
    assert await candidates(routes, ProxyChoice(), tenant="acme") is None
    assert await candidates(routes, ProxyChoice(), tenant="other") == (A, B, C)
