"""Fetches through real proxies on loopback (pproxy: HTTP CONNECT and SOCKS5): each hop is a
tunnel to the address the guard vetted, never to a name; a proxy that is down costs no page
while another serves; a choice no proxy serves is never fetched directly instead."""

from __future__ import annotations

import json

import pytest

from scrapejobs_devstack.processes import free_port
from scrapejobs_shared.options.proxy_pools import ProxyChoice, parse_pool
from scrapejobs_shared.ports.fetcher import (
    BlockedDestination,
    FetchRequest,
    FetchRoute,
    ProxyUnavailable,
)
from scrapejobs_worker.fetching import FetchPolicy
from scrapejobs_worker.fetching.resolver import Resolver

LOOPBACK = ("127.0.0.1/32",)


def _pool(*entries: dict[str, str]) -> str:
    return json.dumps(list(entries))


@pytest.mark.parametrize("scheme", ["http", "socks5"])
async def test_a_page_goes_through_the_proxy_as_a_tunnel_to_the_vetted_address(
    scheme, http_server, fetcher_factory, fake_dns, proxies
):
    proxy = proxies()
    http_server.serve("/", b"through the proxy")
    pool = parse_pool(_pool({"url": proxy.url(scheme), "country": "DE"}))
    policy = FetchPolicy(allowlist=LOOPBACK, proxies=pool)
    getaddrinfo = fake_dns({"shop.example": ["127.0.0.1"]})
    fetcher = fetcher_factory(policy, resolver=Resolver(policy.address_policy(), getaddrinfo))

    url = f"http://shop.example:{http_server.port}/"
    response = await fetcher.fetch(
        FetchRequest(url, route=FetchRoute(proxy=ProxyChoice("basic", "DE")))
    )

    assert response.body == b"through the proxy"
    assert response.proxy == f"{scheme}://127.0.0.1:{proxy.port}"
    # the proxy was asked for the address, never the name; the site still saw the name
    assert proxy.tunnels() == [(scheme, "127.0.0.1", http_server.port)]
    assert http_server.requests[0].headers["host"] == f"shop.example:{http_server.port}"
    assert "s3cret-pw" not in repr(pool) and "s3cret-pw" not in response.proxy


async def test_a_name_that_resolves_to_a_refused_address_reaches_no_proxy(
    fetcher_factory, fake_dns, proxies
):
    proxy = proxies()
    policy = FetchPolicy(allowlist=LOOPBACK, proxies=parse_pool(_pool({"url": proxy.url()})))
    getaddrinfo = fake_dns({"inside.example": ["10.0.0.7"]})
    fetcher = fetcher_factory(policy, resolver=Resolver(policy.address_policy(), getaddrinfo))

    with pytest.raises(BlockedDestination):
        await fetcher.fetch(
            FetchRequest("http://inside.example/", route=FetchRoute(proxy=ProxyChoice()))
        )
    assert proxy.tunnels() == []


async def test_a_dead_proxy_listed_first_costs_no_page(http_server, fetcher_factory, proxies):
    alive = proxies()
    dead = f"http://127.0.0.1:{free_port()}"  # nothing listens there
    http_server.serve("/", b"served")
    pool = parse_pool(_pool({"url": dead}, {"url": alive.url()}))
    fetcher = fetcher_factory(FetchPolicy(allowlist=LOOPBACK, proxies=pool))

    for _ in range(4):
        response = await fetcher.fetch(
            FetchRequest(http_server.url("/"), route=FetchRoute(proxy=ProxyChoice()))
        )
        assert response.body == b"served" and response.proxy.endswith(f":{alive.port}")
    counts = fetcher.proxy_counts()
    assert counts[dead].failed == 1  # benched after its first failure: tried last since
    assert counts[alive.url().replace("scraper:s3cret-pw@", "")].served == 4


async def test_a_choice_no_proxy_serves_is_not_fetched_directly(http_server, fetcher_factory):
    pool = parse_pool(_pool({"url": f"http://127.0.0.1:{free_port()}", "country": "US"}))
    fetcher = fetcher_factory(FetchPolicy(allowlist=LOOPBACK, proxies=pool))
    http_server.serve("/", b"never")

    with pytest.raises(ProxyUnavailable, match="no proxy serves basic in FR"):
        await fetcher.fetch(
            FetchRequest(http_server.url("/"), route=FetchRoute(proxy=ProxyChoice("basic", "FR")))
        )
    with pytest.raises(ProxyUnavailable, match="unreachable"):  # its only proxy is down
        await fetcher.fetch(
            FetchRequest(http_server.url("/"), route=FetchRoute(proxy=ProxyChoice("basic", "US")))
        )
    assert http_server.requests == []


async def test_the_own_route_without_a_basic_pool_is_direct(http_server, fetcher_factory):
    pool = parse_pool(_pool({"url": f"http://127.0.0.1:{free_port()}", "tier": "stealth"}))
    fetcher = fetcher_factory(FetchPolicy(allowlist=LOOPBACK, proxies=pool))
    http_server.serve("/", b"direct")

    response = await fetcher.fetch(
        FetchRequest(http_server.url("/"), route=FetchRoute(proxy=ProxyChoice()))
    )

    assert response.body == b"direct" and response.proxy is None


async def test_a_sticky_session_keeps_to_one_proxy_and_others_take_turns(
    http_server, fetcher_factory, proxies
):
    first, second = proxies(), proxies()
    http_server.serve("/", b"page")
    pool = parse_pool(_pool({"url": first.url()}, {"url": second.url("socks5")}))
    sticky = fetcher_factory(FetchPolicy(allowlist=LOOPBACK, proxies=pool, proxy_sticky=True))
    turns = fetcher_factory(FetchPolicy(allowlist=LOOPBACK, proxies=pool))
    url = http_server.url("/")

    session = FetchRequest(url, route=FetchRoute(proxy=ProxyChoice(), session="job"))
    kept = {(await sticky.fetch(session)).proxy for _ in range(4)}
    taken = {(await turns.fetch(session)).proxy for _ in range(4)}
    assert len(kept) == 1 and len(taken) == 2


async def test_a_tenants_own_pool_carries_its_pages_and_no_other_tenants(
    http_server, fetcher_factory, fake_dns, proxies
):
    """A tenant's pool (kept by the store, credentials and all) is its jobs' route instead of
    the deployment's; another tenant's page asking the same never goes through it (nor
    direct)."""
    from scrapejobs_shared.adapters.memory.tenant_proxies import MemoryTenantProxies

    theirs, deployment = proxies(), proxies()
    http_server.serve("/", b"through the tenant's proxy")
    store = MemoryTenantProxies()
    await store.set_pool("acme", parse_pool(_pool({"url": theirs.url("socks5"), "country": "FR"})))
    pool = parse_pool(_pool({"url": deployment.url(), "country": "DE"}))
    policy = FetchPolicy(allowlist=LOOPBACK, proxies=pool)
    getaddrinfo = fake_dns({"shop.example": ["127.0.0.1"]})
    resolver = Resolver(policy.address_policy(), getaddrinfo)
    fetcher = fetcher_factory(policy, resolver=resolver, tenant_proxies=store)
    url = f"http://shop.example:{http_server.port}/"
    france = ProxyChoice("basic", "FR")

    mine = await fetcher.fetch(FetchRequest(url, route=FetchRoute(proxy=france, tenant="acme")))
    assert mine.body == b"through the tenant's proxy"
    assert mine.proxy == f"socks5://127.0.0.1:{theirs.port}"
    with pytest.raises(ProxyUnavailable):
        await fetcher.fetch(FetchRequest(url, route=FetchRoute(proxy=france, tenant="other")))
    with pytest.raises(ProxyUnavailable):  # acme's jobs no longer reach the deployment's
        await fetcher.fetch(
            FetchRequest(url, route=FetchRoute(proxy=ProxyChoice("basic", "DE"), tenant="acme"))
        )
    assert theirs.tunnels() == [("socks5", "127.0.0.1", http_server.port)]
    assert deployment.tunnels() == [] and len(http_server.requests) == 1
