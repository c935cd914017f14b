"""Which proxy a fetch goes through (fetching/proxy_routes.py): round robin within the proxies
serving a choice; a proxy that failed is benched, tried only after every proxy still up, until
its time is out; the deployment's own route is direct where no basic pool is configured, any
other choice no proxy serves is never direct. And the aiohttp method the tunnels override
(fetching/tunnel_connector.py) still takes what they rely on."""

from __future__ import annotations

import inspect
import json

import aiohttp

from scrapejobs_shared.options.proxy_pools import ProxyChoice, parse_pool
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


def test_proxies_serving_a_choice_take_turns() -> None:
    routes = ProxyRoutes(POOL, bench_s=30)
    assert [routes.candidates(DE) for _ in range(3)] == [(A, B), (B, A), (A, B)]
    assert routes.candidates(ProxyChoice()) == (A, B, C)
    assert routes.candidates(ProxyChoice("stealth")) == (S,)


def test_a_failed_proxy_is_tried_after_those_up_until_its_bench_is_over() -> None:
    now = [0.0]
    routes = ProxyRoutes(POOL, bench_s=30, clock=lambda: now[0])
    routes.failed(A)
    assert routes.candidates(DE) == (B, A) and routes.candidates(DE) == (B, A)
    now[0] = 31.0
    assert routes.candidates(DE) == (A, B)
    routes.failed(B)
    routes.served(B)  # it answered again: no longer benched
    assert routes.candidates(DE) == (B, A)
    assert (routes.counts[A.label].failed, routes.counts[B.label].served) == (1, 1)


def test_the_own_route_is_direct_without_a_basic_pool_and_nothing_else_is() -> None:
    stealth_only = parse_pool(json.dumps([{"url": "http://s.example:1", "tier": "stealth"}]))
    routes = ProxyRoutes(stealth_only, bench_s=30)
    assert routes.candidates(ProxyChoice()) is None  # direct
    assert routes.candidates(ProxyChoice("basic", "DE")) == ()  # never direct instead
    assert ProxyRoutes(POOL, bench_s=30).candidates(ProxyChoice("stealth", "FR")) == ()


def test_the_aiohttp_method_the_tunnels_override_takes_what_they_rely_on() -> None:
    """tunnel_connector.py overrides TCPConnector._wrap_create_connection (private): an aiohttp
    that calls it otherwise must fail here, not in production."""
    method = inspect.signature(aiohttp.TCPConnector._wrap_create_connection)
    keyword = {n for n, p in method.parameters.items() if p.kind is p.KEYWORD_ONLY}
    assert {"addr_infos", "req", "timeout", "client_error"} <= keyword
    caller = inspect.getsource(aiohttp.TCPConnector._create_direct_connection)
    for passed in ("ssl=sslcontext", "addr_infos=addr_infos", "server_hostname=server_hostname"):
        assert passed in caller, passed


def test_a_sticky_key_keeps_to_one_proxy_while_it_is_up() -> None:
    now = [0.0]
    routes = ProxyRoutes(POOL, bench_s=30, clock=lambda: now[0])
    first = routes.candidates(DE, "job-1 shop.example")
    assert first is not None and all(
        routes.candidates(DE, "job-1 shop.example") == first for _ in range(5)
    )
    again = ProxyRoutes(POOL, bench_s=30).candidates(DE, "job-1 shop.example")
    assert again == first  # the same in every process
    keys = {routes.candidates(DE, f"job-{n} shop.example")[0] for n in range(20)}  # type: ignore[index]
    assert keys == {A, B}  # sessions spread over the pool
    routes.failed(first[0])
    assert routes.candidates(DE, "job-1 shop.example")[0] == first[1]  # type: ignore[index]
