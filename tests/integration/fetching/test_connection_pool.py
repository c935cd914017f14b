"""LinearConnectionPool decides as httpcore's own pool does, against a real loopback server."""

from __future__ import annotations

import asyncio

import httpcore
import pytest

from scrapejobs_worker.fetching.connection_pool import LinearConnectionPool


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
