"""Proxies on the stack (real proxies on loopback, tests/conftest.py's ``stack_proxies``: a German
HTTP proxy, an American SOCKS5 one): firecrawl-py unmodified with ``location.country`` goes
through that country's proxy, a country no pool serves is refused at submit, a rendered page's
requests go through the job's proxy, and no proxy is ever handed a name."""

from __future__ import annotations

import ipaddress
import time
import uuid
from urllib.parse import urlsplit

import httpx
import pytest
from firecrawl import Firecrawl
from firecrawl.v2.utils.error_handler import BadRequestError

from scrapejobs_devstack.local_proxy import LocalProxy
from scrapejobs_devstack.stack import Stack
from support.jobs import steady
from support.site import Site


def _to_site(proxy: LocalProxy, site: Site) -> list[tuple[str, str, int]]:
    port = urlsplit(site.url).port
    return [tunnel for tunnel in proxy.tunnels() if tunnel[2] == port]


def test_a_country_goes_through_that_country_s_proxy(
    firecrawl: Firecrawl, site: Site, stack_proxies: dict[str, LocalProxy]
) -> None:
    de, us = stack_proxies["DE"], stack_proxies["US"]
    before = len(us.tunnels())
    german = firecrawl.scrape(
        f"{site.url}/article/{uuid.uuid4().int % 10_000}", location={"country": "DE"}, max_age=0
    )
    assert german.markdown and german.metadata.status_code == 200
    assert german.metadata.proxy_used == "basic"
    assert [protocol for protocol, _, _ in _to_site(de, site)][:1] == ["http"]
    assert len(us.tunnels()) == before  # not the other country's

    american = firecrawl.scrape(
        f"{site.url}/article/{uuid.uuid4().int % 10_000}", location={"country": "US"}, max_age=0
    )
    assert american.markdown
    assert len(_to_site(us, site)) > before and us.tunnels()[-1][0] == "socks5"
    for proxy in (de, us):  # never a name: the site is asked for by name, the proxies by address
        assert all(ipaddress.ip_address(host) for _, host, _ in proxy.tunnels())


def test_a_country_no_pool_serves_is_refused_naming_it(firecrawl: Firecrawl, site: Site) -> None:
    with pytest.raises(BadRequestError) as refused:
        firecrawl.scrape(f"{site.url}/article/1", location={"country": "FR"})
    said = str(refused.value)
    assert "location.country" in said and "FR: no basic proxy pool serves this country" in said
    assert "(countries served: DE, US)" in said
    assert "s3cret" not in said


def test_a_native_job_asking_for_an_unserved_tier_is_a_422(stack: Stack, site: Site) -> None:
    answer = httpx.post(
        f"{stack.config.dispatcher_url}/v1/jobs",
        json={"url": f"{site.url}/article/2", "options": {"proxy": {"tier": "stealth"}}},
        timeout=10,
    )
    assert answer.status_code == 422, answer.text
    assert answer.json()["error"]["field"] == "options.proxy.tier"


def test_a_rendered_page_goes_through_the_job_s_proxy(
    firecrawl: Firecrawl, site: Site, stack_proxies: dict[str, LocalProxy], renderer: object
) -> None:
    us = stack_proxies["US"]
    before = len(_to_site(us, site))
    doc = firecrawl.scrape(
        f"{site.url}/languages/proxied-{uuid.uuid4().hex[:6]}",
        location={"country": "US", "languages": ["de-DE"]},
        wait_for=50,  # rendered
        max_age=0,
        timeout=30000,
    )
    assert doc.markdown, doc.metadata
    assert "NAVIGATOR-de-DE" in doc.markdown  # rendered, in the languages asked, through US
    assert len(_to_site(us, site)) > before  # the renderer's own connections, through the proxy


def test_the_workers_view_counts_each_proxy_without_its_credentials(
    stack: Stack, firecrawl: Firecrawl, site: Site, stack_proxies: dict[str, LocalProxy]
) -> None:
    firecrawl.scrape(f"{site.url}/article/{uuid.uuid4().int % 10_000}", location={"country": "DE"})
    label = f"http://127.0.0.1:{stack_proxies['DE'].port}"
    deadline = time.monotonic() + 20
    while True:
        answer = httpx.get(f"{stack.config.dispatcher_url}/v1/workers", timeout=10)
        assert answer.status_code == 200 and "s3cret" not in answer.text
        used = [
            proxy
            for worker in answer.json()["workers"]
            for proxy in worker["proxies"]
            if proxy["proxy"] == label
        ]
        if used and sum(p["served"] for p in used) >= 1:
            return
        assert time.monotonic() < deadline, answer.json()
        time.sleep(0.5)


def test_usage_counts_the_pages_that_came_through_a_proxy_by_tier(
    stack: Stack, firecrawl: Firecrawl, site: Site
) -> None:
    def proxied() -> int:
        answer = httpx.get(f"{stack.config.dispatcher_url}/v1/usage", timeout=10)
        assert answer.status_code == 200, answer.text
        return sum(u.get("proxied_pages", {}).get("basic", 0) for u in answer.json()["usage"])

    before = steady(proxied)  # earlier tests' proxied pages are counted within a second
    firecrawl.scrape(f"{site.url}/article/{uuid.uuid4().int % 10_000}", location={"country": "US"})
    firecrawl.scrape(f"{site.url}/article/{uuid.uuid4().int % 10_000}")  # direct: not counted
    deadline = time.monotonic() + 20
    while proxied() < before + 1:  # the worker writes its stats within a second of the end
        assert time.monotonic() < deadline
        time.sleep(0.5)
    assert steady(proxied) == before + 1  # once, and never again later
