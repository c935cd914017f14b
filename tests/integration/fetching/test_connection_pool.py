"""LinearConnectionPool decides as httpcore's own pool does, against a real loopback server."""

from __future__ import annotations

import asyncio

import httpcore
import pytest
from httpcore._async.interfaces import AsyncConnectionInterface

from scrapejobs_worker.fetching.connection_pool import SWEEP_INTERVAL_S, LinearConnectionPool


async def _scenario(pool: httpcore.AsyncConnectionPool, url: str) -> None:
    async def get() -> bytes:
        response = await pool.request("GET", url)
        return response.content

    assert await asyncio.gather(*(get() for _ in range(4))) == [b"slow"] * 4  # 4 at once
    for _ in range(3):  # one at a time: kept-alive connections serve them
        assert await get() == b"slow"


@pytest.mark.parametrize("max_keepalive", [1, 2, 10])
async def test_connections_opened_and_kept_match_httpcores_pool(server_factory, max_keepalive):
    opened = []
    for pool_class in (httpcore.AsyncConnectionPool, LinearConnectionPool):
        server = await server_factory()

        async def slow(_request, writer, server=server):
            await asyncio.sleep(0.05)  # the 4 concurrent requests overlap
            await server.send_response(writer, 200, b"slow")

        server.routes["/slow"] = slow
        async with pool_class(max_connections=10, max_keepalive_connections=max_keepalive) as pool:
            await _scenario(pool, server.url("/slow"))
            kept = len(pool.connections)
        opened.append((server.connections, kept))
    assert opened[0] == opened[1]
    assert opened[1][1] <= max_keepalive


class CountingLinearPool(LinearConnectionPool):
    """Counts the pool's bookkeeping passes: two per request (entering, leaving) unless a
    request is given a connection it cannot use and has to go round again."""

    passes = 0

    def _assign_requests_to_connections(self) -> list[AsyncConnectionInterface]:
        self.passes += 1
        return super()._assign_requests_to_connections()


class CountingHttpcorePool(httpcore.AsyncConnectionPool):
    passes = 0

    def _assign_requests_to_connections(self) -> list[AsyncConnectionInterface]:
        self.passes += 1
        return super()._assign_requests_to_connections()


async def _lanes(pool: httpcore.AsyncConnectionPool, url: str, lanes: int, each: int) -> None:
    async def lane() -> None:
        for _ in range(each):
            response = await pool.request("GET", url)
            assert response.content == b"page"
            await asyncio.sleep(0)  # the lane's own work before its next request

    await asyncio.gather(*(lane() for _ in range(lanes)))


async def test_a_connection_is_given_to_one_request_at_a_time(server_factory):
    """16 lanes over 16 connections: every request starts on the first connection it is
    given (httpcore's pass gives an idle connection to several queued requests; all but one
    go round again: more passes than two per request)."""
    lanes, each = 16, 20
    passes: dict[type, int] = {}
    pool_class: type[CountingHttpcorePool | CountingLinearPool]
    for pool_class in (CountingHttpcorePool, CountingLinearPool):
        server = await server_factory()
        server.serve("/page", b"page")
        pool = pool_class(max_connections=lanes, max_keepalive_connections=lanes)
        async with pool:
            await _lanes(pool, server.url("/page"), lanes, each)
            passes[pool_class] = pool.passes
        assert server.connections <= lanes
    assert passes[CountingLinearPool] == 2 * lanes * each
    assert passes[CountingHttpcorePool] > passes[CountingLinearPool]


async def test_a_connection_the_server_closed_while_idle_is_not_given_to_a_request(
    server_factory,
):
    """The expiry of the connection a request would be given is checked, even on a pass that
    does not sweep every idle connection: a closed one is dropped and a new one opened."""
    opened = []
    for pool_class in (httpcore.AsyncConnectionPool, LinearConnectionPool):
        server = await server_factory()

        async def answer_then_close(_request, writer, server=server):
            await server.send_response(writer, 200, b"once")  # keep-alive, as far as it says
            writer.close()

        server.routes["/once"] = answer_then_close
        async with pool_class(max_connections=4) as pool:
            for _ in range(3):
                assert (await pool.request("GET", server.url("/once"))).content == b"once"
                await asyncio.sleep(0.05)  # the server's FIN arrives; no sweep is due yet
        opened.append(server.connections)
    assert opened == [3, 3]


async def test_idle_connections_past_their_keep_alive_are_closed_by_a_later_pass(
    server_factory,
):
    kept = []
    for pool_class in (httpcore.AsyncConnectionPool, LinearConnectionPool):
        first, second = await server_factory(), await server_factory()
        first.serve("/a", b"a")
        second.serve("/b", b"b")
        async with pool_class(max_connections=4, keepalive_expiry=0.05) as pool:
            await pool.request("GET", first.url("/a"))
            await asyncio.sleep(SWEEP_INTERVAL_S + 0.1)
            await pool.request("GET", second.url("/b"))  # its passes close first's connection
            kept.append([c.can_handle_request(_origin(second.port)) for c in pool.connections])
    assert kept == [[True], [True]]


def _origin(port: int) -> httpcore.Origin:
    return httpcore.Origin(b"http", b"127.0.0.1", port)
