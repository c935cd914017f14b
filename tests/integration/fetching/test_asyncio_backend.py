"""The fetcher's network backend on asyncio's transports (asyncio_backend.py), on both loops the
services meet (uvloop under uvicorn, asyncio's own in the rest of the suite): reads and writes,
the peer's end, timeouts and refused connections raise httpcore's errors as AnyIO's backend
does, and a body larger than what the backend keeps unread arrives whole (reading pauses and
resumes)."""

from __future__ import annotations

import asyncio
import socket
from collections.abc import Awaitable, Callable, Coroutine
from typing import Any

import httpcore
import pytest
import uvloop

from scrapejobs_worker.fetching.asyncio_backend import HIGH_WATER, AsyncioBackend

Runner = Callable[[Coroutine[Any, Any, Any]], Any]
LOOPS: dict[str, Runner] = {"asyncio": asyncio.run, "uvloop": uvloop.run}
Handler = Callable[[asyncio.StreamReader, asyncio.StreamWriter], Awaitable[None]]


async def _serve(handler: Handler) -> tuple[asyncio.Server, int]:
    server = await asyncio.start_server(handler, "127.0.0.1", 0)
    return server, server.sockets[0].getsockname()[1]


async def _echo_then_close(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
    data = await reader.readexactly(5)
    writer.write(data.upper())
    await writer.drain()
    writer.close()


async def _silent(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
    await asyncio.sleep(5)
    writer.close()


async def _big(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
    writer.write(b"x" * (HIGH_WATER * 3 + 17))
    await writer.drain()
    writer.close()


@pytest.mark.parametrize("loop", LOOPS)
def test_a_write_is_answered_and_the_peers_end_reads_empty(loop: str) -> None:
    async def scenario() -> tuple[bytes, bytes, Any, bool]:
        server, port = await _serve(_echo_then_close)
        async with server:
            stream = await AsyncioBackend().connect_tcp("127.0.0.1", port, timeout=5)
            await stream.write(b"hello", timeout=5)
            answer = b""
            while len(answer) < 5:
                answer += await stream.read(65536, timeout=5)
            end = await stream.read(65536, timeout=5)
            peer = stream.get_extra_info("server_addr")
            readable = stream.get_extra_info("is_readable")
            await stream.aclose()
            return answer, end, peer, readable

    answer, end, peer, readable = LOOPS[loop](scenario())
    assert (answer, end) == (b"HELLO", b"")
    assert peer[0] == "127.0.0.1"
    assert readable is True  # the peer's end is there to read


@pytest.mark.parametrize("loop", LOOPS)
def test_a_read_past_its_timeout_raises_read_timeout(loop: str) -> None:
    async def scenario() -> None:
        server, port = await _serve(_silent)
        async with server:
            stream = await AsyncioBackend().connect_tcp("127.0.0.1", port, timeout=5)
            try:
                with pytest.raises(httpcore.ReadTimeout):
                    await stream.read(65536, timeout=0.05)
            finally:
                await stream.aclose()

    LOOPS[loop](scenario())


@pytest.mark.parametrize("loop", LOOPS)
def test_a_refused_connection_raises_connect_error(loop: str, free_port: int) -> None:
    async def scenario() -> None:
        with pytest.raises(httpcore.ConnectError):
            await AsyncioBackend().connect_tcp("127.0.0.1", free_port, timeout=5)

    LOOPS[loop](scenario())


@pytest.mark.parametrize("loop", LOOPS)
def test_a_body_past_what_is_kept_unread_arrives_whole(loop: str) -> None:
    async def scenario() -> tuple[int, bool]:
        server, port = await _serve(_big)
        async with server:
            stream = await AsyncioBackend().connect_tcp("127.0.0.1", port, timeout=5)
            await asyncio.sleep(0.2)  # everything sent: reading paused past the mark
            total = 0
            while chunk := await stream.read(65536, timeout=5):
                total += len(chunk)
            raw = stream.get_extra_info("socket")
            nodelay = bool(raw.getsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY))
            await stream.aclose()
            return total, nodelay

    total, nodelay = LOOPS[loop](scenario())
    assert total == HIGH_WATER * 3 + 17
    assert nodelay  # as AnyIO's backend sets it
