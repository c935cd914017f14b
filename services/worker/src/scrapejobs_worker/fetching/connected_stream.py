"""A connected network stream whose socket facts are read once, when it connects.

httpcore asks every idle pooled connection whether its socket is readable (a server that closed
it) each time a request enters or leaves the pool, and the fetcher asks every response for its
peer address (``verify_peer``). AnyIO's stream answers each of those questions by rebuilding its
table of socket attributes, which calls ``getpeername`` every time: with a few connections per
host that was most of the pool's cost per page. The peer and local addresses of a connected
TCP socket never change, so this wrapper reads them once; readability is still asked of the
socket itself on every call (one non-blocking ``poll``), as httpcore does.
"""

from __future__ import annotations

import select
import ssl
from typing import Any

import httpcore


class ConnectedStream(httpcore.AsyncNetworkStream):
    def __init__(
        self,
        inner: httpcore.AsyncNetworkStream,
        server_addr: Any,
        client_addr: Any,
        raw_socket: Any,
    ) -> None:
        self._inner = inner
        self._server_addr = server_addr
        self._client_addr = client_addr
        self._socket = raw_socket

    @classmethod
    def of(cls, inner: httpcore.AsyncNetworkStream) -> ConnectedStream:
        return cls(
            inner,
            inner.get_extra_info("server_addr"),
            inner.get_extra_info("client_addr"),
            inner.get_extra_info("socket"),  # a socket, or asyncio's TransportSocket view
        )

    async def read(self, max_bytes: int, timeout: float | None = None) -> bytes:
        return await self._inner.read(max_bytes, timeout)

    async def write(self, buffer: bytes, timeout: float | None = None) -> None:
        await self._inner.write(buffer, timeout)

    async def aclose(self) -> None:
        await self._inner.aclose()

    async def start_tls(
        self,
        ssl_context: ssl.SSLContext,
        server_hostname: str | None = None,
        timeout: float | None = None,
    ) -> httpcore.AsyncNetworkStream:
        tls = await self._inner.start_tls(ssl_context, server_hostname, timeout)
        return ConnectedStream(tls, self._server_addr, self._client_addr, self._socket)

    def get_extra_info(self, info: str) -> Any:
        if info == "server_addr":
            return self._server_addr
        if info == "client_addr":
            return self._client_addr
        if info == "socket":
            return self._socket
        if info == "is_readable":
            return is_readable(self._socket)
        return self._inner.get_extra_info(info)  # ssl_object


def is_readable(raw_socket: Any) -> bool:
    """Whether a read would return at once (data, or the b"" of a closed connection). A socket
    that is gone counts as readable: its next read ends the connection."""
    fd = raw_socket.fileno() if raw_socket is not None else -1
    if fd < 0:
        return True
    poll = select.poll()
    poll.register(fd, select.POLLIN)
    return bool(poll.poll(0))
