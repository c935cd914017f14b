"""The fetcher's connections against a real loopback server: kept alive and reused, one
request at a time each, never a connection the server closed, and the peer of every response
re-checked (a small body is read whole before the fetcher sees the response)."""

from __future__ import annotations

import asyncio

import pytest

from scrapejobs_shared.ports.fetcher import BlockedDestination, FetchRequest
from scrapejobs_worker.fetching import FetchPolicy
from scrapejobs_worker.fetching.client import PinnedSender
from scrapejobs_worker.fetching.pinned_connector import pin_destination
from scrapejobs_worker.fetching.request_validation import parse_target_url
from scrapejobs_worker.fetching.resolver import Resolver
from scrapejobs_worker.fetching.safe_fetcher import verified_context

LOOPBACK = ("127.0.0.0/8",)


async def test_connections_are_kept_alive_and_each_serves_one_request_at_a_time(
    server_factory, fetcher_factory
):
    server = await server_factory(("127.0.0.1",))

    async def slow(_request, writer):
        await asyncio.sleep(0.05)  # the 4 concurrent requests overlap
        await server.send_response(writer, 200, b"slow")

    server.routes["/slow"] = slow
    fetcher = fetcher_factory(FetchPolicy(allowlist=LOOPBACK))
    url = server.url("/slow")
    answers = await asyncio.gather(
        *(fetcher.fetch(FetchRequest(url, timeout_s=5)) for _ in range(4))
    )
    assert [a.body for a in answers] == [b"slow"] * 4
    assert server.connections == 4  # one request at a time on each
    for _ in range(6):  # one at a time: the kept-alive connections serve them
        assert (await fetcher.fetch(FetchRequest(url, timeout_s=5))).body == b"slow"
    assert server.connections == 4


async def test_a_connection_the_server_closed_while_idle_is_not_given_to_a_request(
    server_factory, fetcher_factory
):
    server = await server_factory(("127.0.0.1",))

    async def answer_then_close(_request, writer):
        await server.send_response(writer, 200, b"once")  # keep-alive, as far as it says
        writer.close()

    server.routes["/once"] = answer_then_close
    fetcher = fetcher_factory(FetchPolicy(allowlist=LOOPBACK))
    for _ in range(3):
        response = await fetcher.fetch(FetchRequest(server.url("/once"), timeout_s=5))
        assert response.body == b"once"
        await asyncio.sleep(0.05)  # the server's FIN arrives
    assert server.connections == 3


async def test_the_peer_of_a_response_read_whole_on_arrival_is_known(server_factory):
    """aiohttp gives a connection back to its pool as soon as a small body has arrived; the
    response still says where it came from (the fetcher's peer check fails closed without)."""
    server = await server_factory(("127.0.0.1",))
    server.serve("/small", b"tiny")
    policy = FetchPolicy(allowlist=LOOPBACK)
    sender = PinnedSender(policy, verified_context())
    url = parse_target_url(server.url("/small"))
    destination = await Resolver(policy.address_policy()).resolve("127.0.0.1", server.port)
    try:
        with pin_destination(destination):
            response = await sender.send("GET", url, {})
        await asyncio.sleep(0.05)
        assert response.peer[:2] == ("127.0.0.1", server.port)
        await response.aclose()
    finally:
        await sender.aclose()


async def test_a_request_outside_the_pin_is_refused_before_any_connection(
    server_factory, connect_spy
):
    server = await server_factory(("127.0.0.1",))
    policy = FetchPolicy(allowlist=LOOPBACK)
    sender = PinnedSender(policy, verified_context())
    try:
        with pytest.raises(BlockedDestination):
            await sender.send("GET", parse_target_url(server.url("/")), {})  # nothing pinned
    finally:
        await sender.aclose()
    assert connect_spy.attempts == []
    assert server.connections == 0


async def test_long_header_lines_as_real_sites_send_them_are_read(http_server, fetcher_factory):
    policy = ("default-src 'self'; " + "script-src https://cdn.example " * 600).strip()  # ~20 KB
    http_server.serve("/csp", b"page", {"Content-Security-Policy": policy, "X-Name": "caf\u00e9"})
    fetcher = fetcher_factory(FetchPolicy(allowlist=LOOPBACK))
    response = await fetcher.fetch(FetchRequest(http_server.url("/csp"), timeout_s=5))
    assert response.body == b"page"
    assert response.headers["content-security-policy"] == policy
    assert response.headers["x-name"] == "caf\u00e9"


async def test_a_body_goes_with_the_content_type_its_caller_gives_or_none(
    server_factory, fetcher_factory
):
    fetcher = fetcher_factory(FetchPolicy(allowlist=LOOPBACK))
    sent = []
    for headers in ({}, {"content-type": "application/json"}):
        server = await server_factory(("127.0.0.1",))  # one request each: bodies go unread
        server.serve("/hook", b"ok")
        request = FetchRequest(server.url("/hook"), headers, 5.0, body=b'{"a": 1}')
        assert (await fetcher.fetch(request)).status == 200
        sent.append(server.requests[0])
    assert [r.method for r in sent] == ["POST", "POST"]
    assert sent[0].headers["content-length"] == "8"
    assert "content-type" not in sent[0].headers
    assert sent[1].headers["content-type"] == "application/json"
