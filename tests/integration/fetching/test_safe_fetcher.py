"""SafeFetcher against real loopback servers: SSRF refusals, redirects, headers, proxies."""

from __future__ import annotations

import ipaddress

import pytest

from scrapejobs_shared.ports.fetcher import (
    BlockedDestination,
    FetchRequest,
    PermanentFetchError,
    TransientFetchError,
)
from scrapejobs_worker.fetching import FetchPolicy, build_fetcher
from scrapejobs_worker.fetching.config import DEFAULT_USER_AGENT
from scrapejobs_worker.fetching.resolver import Resolver

LOOPBACK_ALLOWLIST = ("127.0.0.0/8", "::1/128")


def _teredo(client_v4: str) -> str:
    """A Teredo address (server 65.54.227.120) whose obfuscated client is ``client_v4``."""
    server = int(ipaddress.IPv4Address("65.54.227.120"))
    client = int(ipaddress.IPv4Address(client_v4)) ^ 0xFFFFFFFF
    value = (0x20010000 << 96) | (server << 64) | (0x8000_63BF << 32) | client
    return str(ipaddress.IPv6Address(value))


# Hosts, as they appear in a URL, that must be refused without opening any connection.
SSRF_HOSTS = [
    "127.0.0.1",
    "127.0.0.2",
    "localhost",
    "LOCALHOST",
    "[::1]",
    "0.0.0.0",
    "[::]",
    "10.0.0.1",
    "172.16.0.1",
    "192.168.1.1",
    "169.254.169.254",
    "metadata.google.internal",
    "METADATA.google.internal.",
    "metadata",
    "anything.internal",
    "100.64.0.1",
    "224.0.0.1",
    "240.0.0.1",
    "255.255.255.255",
    "192.0.2.1",
    "198.18.0.1",
    "[fc00::1]",
    "[fd12:3456::1]",
    "[fe80::1]",
    "[fec0::1]",
    "[ff02::1]",
    "[::ffff:127.0.0.1]",
    "[::ffff:169.254.169.254]",
    "[::ffff:7f00:1]",
    "[::127.0.0.1]",
    "[64:ff9b::a9fe:a9fe]",
    "[2002:7f00:0001::1]",
    "[2002:a9fe:a9fe::1]",
    f"[{_teredo('10.0.0.1')}]",
    f"[{_teredo('192.168.0.1')}]",
    "2130706433",
    "0x7f.0.0.1",
    "0x7f000001",
    "017700000001",
    "127.1",
]


@pytest.mark.parametrize("host", SSRF_HOSTS)
async def test_ssrf_targets_are_refused_without_any_connection(
    host, http_server, connect_spy, fetcher_factory
):
    # Only the port rule is relaxed (to the test server's port): refusal is for the address.
    fetcher = fetcher_factory(FetchPolicy(allowed_ports=(http_server.port,)))
    url = f"http://{host}:{http_server.port}/"

    with pytest.raises(BlockedDestination) as caught:
        await fetcher.fetch(FetchRequest(url, timeout_s=5))

    assert caught.value.reason == "blocked_destination"
    assert not caught.value.transient
    assert connect_spy.attempts == []
    assert http_server.connections == 0


async def test_production_default_refuses_a_loopback_server(http_server, connect_spy):
    assert FetchPolicy().allowlist == ()
    for policy in (FetchPolicy(), FetchPolicy(allowed_ports=(http_server.port,))):
        async with build_fetcher(policy) as fetcher:
            for host in http_server.hosts:
                with pytest.raises(BlockedDestination):
                    await fetcher.fetch(FetchRequest(http_server.url("/", host), timeout_s=5))
    assert connect_spy.attempts == []
    assert http_server.connections == 0


async def test_allowlisted_loopback_server_is_fetched(http_server, fetcher_factory):
    http_server.serve(
        "/page", b"<html>hi</html>", {"Content-Type": "text/html", "X-Multi": "a", "x-multi": "b"}
    )
    fetcher = fetcher_factory(FetchPolicy(allowlist=LOOPBACK_ALLOWLIST))

    for host in http_server.hosts:
        response = await fetcher.fetch(FetchRequest(http_server.url("/page", host), timeout_s=5))
        assert response.status == 200
        assert response.body == b"<html>hi</html>"
        assert response.content_type == "text/html"
        assert response.headers["x-multi"] == "a, b"
        assert response.url == http_server.url("/page", host)
        assert response.redirects == ()
        assert not response.truncated
        assert response.elapsed_ms >= 0
    sent = http_server.requests[0].headers
    assert sent == {  # what httpx.AsyncClient sends, with our user agent and encodings
        "host": f"127.0.0.1:{http_server.port}",
        "accept": "*/*",
        "accept-encoding": "gzip, deflate",
        "connection": "keep-alive",
        "user-agent": DEFAULT_USER_AGENT,
    }


async def test_error_statuses_are_responses(http_server, fetcher_factory):
    fetcher = fetcher_factory(FetchPolicy(allowlist=LOOPBACK_ALLOWLIST))
    response = await fetcher.fetch(FetchRequest(http_server.url("/missing"), timeout_s=5))
    assert response.status == 404
    assert response.body == b"not found"


async def test_connection_goes_to_the_pinned_ip_while_host_header_keeps_the_name(
    http_server, fetcher_factory, fake_dns
):
    http_server.serve("/", b"named")
    policy = FetchPolicy(allowlist=("127.0.0.1/32",))
    getaddrinfo = fake_dns({"shop.example": ["127.0.0.1"]})
    fetcher = fetcher_factory(policy, resolver=Resolver(policy.address_policy(), getaddrinfo))

    response = await fetcher.fetch(FetchRequest(f"http://shop.example:{http_server.port}/"))

    assert response.body == b"named"
    assert http_server.requests[0].headers["host"] == f"shop.example:{http_server.port}"
    assert getaddrinfo.lookups == ["shop.example"]


async def test_host_rebound_to_a_private_address_is_refused_even_with_a_pooled_connection(
    http_server, fetcher_factory
):
    answers = [["127.0.0.1"], ["10.0.0.1"]]

    async def rebinding_getaddrinfo(host, port):
        return [(2, 1, 6, "", (a, port)) for a in answers.pop(0)]

    policy = FetchPolicy(allowlist=("127.0.0.1/32",))
    resolver = Resolver(policy.address_policy(), rebinding_getaddrinfo)
    fetcher = fetcher_factory(policy, resolver=resolver)
    url = f"http://rebind.example:{http_server.port}/"

    assert (await fetcher.fetch(FetchRequest(url))).status == 404
    with pytest.raises(BlockedDestination):
        await fetcher.fetch(FetchRequest(url))
    assert len(http_server.requests) == 1  # nothing was sent on the kept-alive connection


async def test_host_resolving_to_any_refused_address_is_refused(
    http_server, connect_spy, fetcher_factory, fake_dns
):
    policy = FetchPolicy(allowlist=("127.0.0.1/32",))
    getaddrinfo = fake_dns({"mixed.example": ["127.0.0.1", "169.254.169.254"]})
    fetcher = fetcher_factory(policy, resolver=Resolver(policy.address_policy(), getaddrinfo))

    with pytest.raises(BlockedDestination):
        await fetcher.fetch(FetchRequest(f"http://mixed.example:{http_server.port}/"))
    assert connect_spy.attempts == []


@pytest.mark.parametrize(
    "location",
    [
        "http://169.254.169.254/computeMetadata/v1/",
        "http://[::ffff:a9fe:a9fe]/",
        "http://metadata/",
    ],
)
async def test_redirect_to_metadata_server_is_refused(
    location, http_server, connect_spy, fetcher_factory
):
    http_server.redirect("/go", location)
    fetcher = fetcher_factory(FetchPolicy(allowlist=LOOPBACK_ALLOWLIST))

    with pytest.raises(BlockedDestination):
        await fetcher.fetch(FetchRequest(http_server.url("/go"), timeout_s=5))
    assert connect_spy.attempts == [("127.0.0.1", http_server.port)]


async def test_redirect_to_a_non_allowlisted_loopback_address_is_refused(
    http_server, server_factory, connect_spy, fetcher_factory
):
    other = await server_factory(("127.0.0.2",), http_server.port)
    other.serve("/secret", b"secret")
    http_server.redirect("/go", other.url("/secret", "127.0.0.2"), 301)
    fetcher = fetcher_factory(FetchPolicy(allowlist=("127.0.0.1/32",)))

    with pytest.raises(BlockedDestination):
        await fetcher.fetch(FetchRequest(http_server.url("/go"), timeout_s=5))
    assert other.connections == 0
    assert connect_spy.attempts == [("127.0.0.1", http_server.port)]


def _chain(server, length: int) -> None:
    for hop in range(length, 0, -1):
        server.redirect(f"/chain/{hop}", f"/chain/{hop - 1}", 307)
    server.serve("/chain/0", b"end of chain")


async def test_five_redirects_are_followed(http_server, fetcher_factory):
    _chain(http_server, 5)
    fetcher = fetcher_factory(FetchPolicy(allowlist=LOOPBACK_ALLOWLIST))

    response = await fetcher.fetch(FetchRequest(http_server.url("/chain/5"), timeout_s=5))

    assert response.body == b"end of chain"
    assert response.url == http_server.url("/chain/0")
    assert response.redirects == tuple(http_server.url(f"/chain/{n}") for n in range(5, 0, -1))


async def test_six_redirects_are_too_many(http_server, fetcher_factory):
    _chain(http_server, 6)
    fetcher = fetcher_factory(FetchPolicy(allowlist=LOOPBACK_ALLOWLIST))

    with pytest.raises(PermanentFetchError) as caught:
        await fetcher.fetch(FetchRequest(http_server.url("/chain/6"), timeout_s=5))
    assert caught.value.reason == "too_many_redirects"
    assert "/chain/0" not in [r.path for r in http_server.requests]


async def test_relative_redirect_is_resolved_against_the_current_url(http_server, fetcher_factory):
    http_server.redirect("/a/b/start", "../final?x=1", 303)
    http_server.serve("/a/final", b"final")
    fetcher = fetcher_factory(FetchPolicy(allowlist=LOOPBACK_ALLOWLIST))

    response = await fetcher.fetch(FetchRequest(http_server.url("/a/b/start"), timeout_s=5))

    assert response.body == b"final"
    assert response.url == http_server.url("/a/final?x=1")
    assert response.redirects == (http_server.url("/a/b/start"),)
    assert [r.method for r in http_server.requests] == ["GET", "GET"]


async def test_redirect_to_another_scheme_is_refused(http_server, fetcher_factory):
    http_server.redirect("/go", "file:///etc/passwd")
    fetcher = fetcher_factory(FetchPolicy(allowlist=LOOPBACK_ALLOWLIST))

    with pytest.raises(PermanentFetchError) as caught:
        await fetcher.fetch(FetchRequest(http_server.url("/go"), timeout_s=5))
    assert caught.value.reason == "invalid_url"


async def test_only_client_headers_follow_a_cross_origin_redirect(
    http_server, server_factory, fetcher_factory
):
    other = await server_factory(("127.0.0.2",), http_server.port)
    other.serve("/landing", b"landed")
    other.redirect("/back", http_server.url("/home"))
    http_server.serve("/home", b"home")
    http_server.redirect("/go", other.url("/landing", "127.0.0.2"))
    http_server.redirect("/go-and-back", other.url("/back", "127.0.0.2"))
    fetcher = fetcher_factory(FetchPolicy(allowlist=LOOPBACK_ALLOWLIST))
    headers = {
        "Authorization": "Bearer t",
        "Cookie": "a=b",
        "X-Api-Key": "k",
        "X-Team": "pricing",
        "Accept": "text/html",
        "Accept-Language": "fr",
        "User-Agent": "job-agent/1",
    }

    await fetcher.fetch(FetchRequest(http_server.url("/go"), headers=headers, timeout_s=5))

    assert http_server.requests[0].headers["authorization"] == "Bearer t"
    assert http_server.requests[0].headers["x-api-key"] == "k"
    landed = other.requests[0].headers
    assert not {"authorization", "cookie", "x-api-key", "x-team"} & set(landed)
    assert landed["accept"] == "text/html" and landed["accept-language"] == "fr"
    assert landed["user-agent"] == "job-agent/1"

    # once the job's origin is left, a redirect back does not bring the headers back
    await fetcher.fetch(FetchRequest(http_server.url("/go-and-back"), headers=headers, timeout_s=5))
    home = next(r for r in http_server.requests if r.path == "/home").headers
    assert not {"authorization", "cookie", "x-api-key", "x-team"} & set(home)


async def test_cookies_are_not_carried_between_fetches(http_server, fetcher_factory):
    http_server.serve("/set", b"", {"Set-Cookie": "session=s3cret; Path=/"})
    fetcher = fetcher_factory(FetchPolicy(allowlist=LOOPBACK_ALLOWLIST))

    await fetcher.fetch(FetchRequest(http_server.url("/set"), timeout_s=5))
    await fetcher.fetch(FetchRequest(http_server.url("/other"), timeout_s=5))

    assert "cookie" not in http_server.requests[1].headers


@pytest.mark.parametrize(
    "name",
    [
        "Host",
        "host",
        "Metadata-Flavor",
        "METADATA-FLAVOR",
        "X-Google-Metadata-Request",
        "Content-Length",
        "Transfer-Encoding",
        "Connection",
        "Accept-Encoding",
    ],
)
async def test_forbidden_headers_are_refused(name, http_server, fetcher_factory):
    fetcher = fetcher_factory(FetchPolicy(allowlist=LOOPBACK_ALLOWLIST))

    with pytest.raises(PermanentFetchError) as caught:
        await fetcher.fetch(FetchRequest(http_server.url("/"), headers={name: "x"}))
    assert caught.value.reason == "forbidden_header"
    assert http_server.connections == 0


@pytest.mark.parametrize(
    "url",
    [
        "ftp://example.com/",
        "file:///etc/passwd",
        "gopher://127.0.0.1:70/",
        "http://user:pw@example.com/",
        "http://user@example.com/",
        "http:///nohost",
        "http://example.com:99999/",
        "http://[fe80::1%25eth0]/",
        "http://0177.0.0.1/",  # httpx rejects zero-padded dotted quads before any lookup
        "not a url",
        "",
    ],
)
async def test_invalid_urls_are_refused(url, connect_spy, fetcher_factory):
    fetcher = fetcher_factory()
    with pytest.raises(PermanentFetchError) as caught:
        await fetcher.fetch(FetchRequest(url))
    assert caught.value.reason == "invalid_url"
    assert connect_spy.attempts == []


async def test_proxy_environment_is_ignored(http_server, server_factory, monkeypatch):
    proxy = await server_factory()
    proxy_url = proxy.url("/")
    for name in (
        "HTTP_PROXY",
        "HTTPS_PROXY",
        "ALL_PROXY",
        "http_proxy",
        "https_proxy",
        "all_proxy",
    ):
        monkeypatch.setenv(name, proxy_url)
    monkeypatch.delenv("NO_PROXY", raising=False)
    monkeypatch.delenv("no_proxy", raising=False)
    http_server.serve("/direct", b"direct")

    async with build_fetcher(FetchPolicy(allowlist=LOOPBACK_ALLOWLIST)) as fetcher:
        response = await fetcher.fetch(FetchRequest(http_server.url("/direct"), timeout_s=5))

    assert response.body == b"direct"
    assert proxy.connections == 0
    assert http_server.connections == 1


async def test_connection_refused_is_transient(free_port, fetcher_factory):
    fetcher = fetcher_factory(FetchPolicy(allowlist=LOOPBACK_ALLOWLIST))
    with pytest.raises(TransientFetchError) as caught:
        await fetcher.fetch(FetchRequest(f"http://127.0.0.1:{free_port}/", timeout_s=5))
    assert caught.value.reason == "connection_error"


async def test_server_closing_mid_response_is_transient(http_server, fetcher_factory):
    async def broken(_request, writer):
        writer.write(b"HTTP/1.1 200 OK\r\nContent-Length: 100\r\n\r\npartial")
        await writer.drain()
        writer.close()

    http_server.routes["/broken"] = broken
    fetcher = fetcher_factory(FetchPolicy(allowlist=LOOPBACK_ALLOWLIST))
    with pytest.raises(TransientFetchError) as caught:
        await fetcher.fetch(FetchRequest(http_server.url("/broken"), timeout_s=5))
    assert caught.value.reason == "connection_error"


async def test_unknown_host_is_a_permanent_dns_error(fetcher_factory, fake_dns):
    policy = FetchPolicy()
    resolver = Resolver(policy.address_policy(), fake_dns({}))
    fetcher = fetcher_factory(policy, resolver=resolver)
    with pytest.raises(PermanentFetchError) as caught:
        await fetcher.fetch(FetchRequest("https://no-such-host.example/"))
    assert caught.value.reason == "dns_error"


async def test_non_global_address_is_refused_on_an_unusual_port_too(
    http_server, connect_spy, fetcher_factory
):
    fetcher = fetcher_factory()
    with pytest.raises(BlockedDestination):
        await fetcher.fetch(FetchRequest("http://8.8.8.8:22/"))
    with pytest.raises(BlockedDestination):
        await fetcher.fetch(FetchRequest(http_server.url("/")))
    assert connect_spy.attempts == []


async def test_unusual_status_is_returned_as_is(http_server, fetcher_factory):
    async def teapot(_request, writer):
        await http_server.send_response(writer, 418, b"short and stout")

    http_server.routes["/teapot"] = teapot
    fetcher = fetcher_factory(FetchPolicy(allowlist=LOOPBACK_ALLOWLIST))
    response = await fetcher.fetch(FetchRequest(http_server.url("/teapot"), timeout_s=5))
    assert (response.status, response.body) == (418, b"short and stout")


async def test_pooled_connections_are_reused_and_one_the_server_closed_is_not(http_server):
    """Idle pooled connections are checked through the pinned backend's streams (their socket
    facts read once at connect): a healthy one serves the next fetches, one the server closed
    is replaced, never read from."""
    http_server.serve("/page", b"page")

    async def close_after_reply(_request, writer):
        await http_server.send_response(writer, 200, b"bye", {"Connection": "close"})
        writer.close()

    http_server.routes["/bye"] = close_after_reply
    async with build_fetcher(FetchPolicy(allowlist=LOOPBACK_ALLOWLIST)) as fetcher:
        for _ in range(5):
            response = await fetcher.fetch(FetchRequest(http_server.url("/page"), timeout_s=5))
            assert response.body == b"page"
        assert http_server.connections == 1
        assert (await fetcher.fetch(FetchRequest(http_server.url("/bye"), timeout_s=5))).body == (
            b"bye"
        )
        response = await fetcher.fetch(FetchRequest(http_server.url("/page"), timeout_s=5))
    assert response.body == b"page"
    assert http_server.connections == 2
