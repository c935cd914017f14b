"""httpcore's network backend on asyncio's own transports (uvloop's in the worker).

httpcore's default backend under asyncio is AnyIO's, which wraps every read and write of a
connection in a cancel scope (a timeout, a checkpoint) and sends through a stream layer that
awaits each write: about a tenth of the worker process's CPU a page, measured
(bench/README.md, "Where a page's time goes now"). Here a connection is a protocol that keeps
what arrives until httpcore reads it: a read that finds data returns at once, a write hands its
bytes to the transport (awaiting only while the transport's buffer is over its high-water
mark), and a timeout is one timer on the loop, armed only while a read or a drain waits. The
transport keeps the socket's addresses from when it connected (no system call to ask them).

Errors are httpcore's, as the AnyIO backend raises them: ``ConnectError`` and
``ConnectTimeout`` while connecting and during the TLS handshake, ``ReadError`` /
``ReadTimeout`` and ``WriteError`` / ``WriteTimeout`` on an open connection.
"""

from __future__ import annotations

import asyncio
import socket
import ssl
from collections.abc import Iterable
from typing import Any, cast

import httpcore

from scrapejobs_worker.fetching.connected_stream import is_readable

HIGH_WATER = 256 * 1024  # bytes kept unread before the socket is no longer read from


class _Connection(asyncio.Protocol):
    def __init__(self) -> None:
        self.transport: asyncio.Transport | None = None
        self.buffer = bytearray()
        self.eof = False
        self.error: BaseException | None = None
        self.waiter: asyncio.Future[bool] | None = None  # a read waiting for data
        self.drained: asyncio.Future[bool] | None = None  # a write waiting for room
        self.paused_writing = False
        self.paused_reading = False

    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        self.transport = cast(asyncio.Transport, transport)  # uvloop's are not subclasses

    def data_received(self, data: bytes) -> None:
        self.buffer += data
        if len(self.buffer) > HIGH_WATER and self.transport is not None:
            self.transport.pause_reading()
            self.paused_reading = True
        self._wake()

    def eof_received(self) -> bool:
        self.eof = True
        self._wake()
        return False  # the transport closes itself

    def connection_lost(self, exc: BaseException | None) -> None:
        self.eof = True
        self.error = exc
        self._wake()
        if self.drained is not None and not self.drained.done():
            self.drained.set_result(True)

    def pause_writing(self) -> None:
        self.paused_writing = True

    def resume_writing(self) -> None:
        self.paused_writing = False
        if self.drained is not None and not self.drained.done():
            self.drained.set_result(True)

    def _wake(self) -> None:
        if self.waiter is not None and not self.waiter.done():
            self.waiter.set_result(True)

    def take(self, max_bytes: int) -> bytes:
        if len(self.buffer) <= max_bytes:  # the usual case: all of it, copied once
            data = bytes(self.buffer)
            self.buffer.clear()
        else:
            with memoryview(self.buffer) as view:
                data = bytes(view[:max_bytes])
            del self.buffer[:max_bytes]
        if self.paused_reading and len(self.buffer) <= HIGH_WATER // 2 and self.transport:
            self.transport.resume_reading()
            self.paused_reading = False
        return data


async def _within(future: asyncio.Future[bool], timeout: float | None) -> bool:
    """Whether ``future`` came true before ``timeout`` (None: no limit) ran out."""
    if timeout is None:
        return await future
    timer = asyncio.get_running_loop().call_later(timeout, _expire, future)
    try:
        return await future
    finally:
        timer.cancel()


def _expire(future: asyncio.Future[bool]) -> None:
    if not future.done():
        future.set_result(False)


class AsyncioStream(httpcore.AsyncNetworkStream):
    def __init__(self, transport: asyncio.Transport, connection: _Connection) -> None:
        self._transport = transport
        self._connection = connection

    async def read(self, max_bytes: int, timeout: float | None = None) -> bytes:
        connection = self._connection
        if not connection.buffer and not connection.eof:
            waiter = connection.waiter = asyncio.get_running_loop().create_future()
            try:
                if not await _within(waiter, timeout):
                    raise httpcore.ReadTimeout("timed out reading from the connection")
            finally:
                connection.waiter = None
        if connection.buffer:
            return connection.take(max_bytes)
        if connection.error is not None:
            raise httpcore.ReadError(str(connection.error)) from connection.error
        return b""  # the peer closed the connection

    async def write(self, buffer: bytes, timeout: float | None = None) -> None:
        if not buffer:
            return
        connection = self._connection
        if self._transport.is_closing():
            raise httpcore.WriteError("the connection is closed")
        try:
            self._transport.write(buffer)
        except (OSError, RuntimeError) as exc:
            raise httpcore.WriteError(str(exc)) from exc
        if connection.paused_writing:
            drained = connection.drained = asyncio.get_running_loop().create_future()
            try:
                if not await _within(drained, timeout):
                    raise httpcore.WriteTimeout("timed out writing to the connection")
            finally:
                connection.drained = None
            if connection.error is not None:
                raise httpcore.WriteError(str(connection.error)) from connection.error

    async def aclose(self) -> None:
        self._transport.close()

    async def start_tls(
        self,
        ssl_context: ssl.SSLContext,
        server_hostname: str | None = None,
        timeout: float | None = None,
    ) -> httpcore.AsyncNetworkStream:
        loop = asyncio.get_running_loop()
        try:
            tls = await asyncio.wait_for(
                loop.start_tls(
                    self._transport,
                    self._connection,
                    ssl_context,
                    server_hostname=server_hostname,
                ),
                timeout,
            )
        except TimeoutError as exc:
            self._transport.abort()
            raise httpcore.ConnectTimeout("timed out during the TLS handshake") from exc
        except (OSError, ssl.SSLError, ConnectionError) as exc:
            self._transport.abort()
            raise httpcore.ConnectError(str(exc)) from exc
        if tls is None:
            raise httpcore.ConnectError("the connection closed during the TLS handshake")
        self._connection.transport = tls
        return AsyncioStream(tls, self._connection)

    def get_extra_info(self, info: str) -> Any:
        if info == "ssl_object":
            return self._transport.get_extra_info("ssl_object")
        if info == "client_addr":
            return self._transport.get_extra_info("sockname")
        if info == "server_addr":
            return self._transport.get_extra_info("peername")
        if info == "socket":
            return self._transport.get_extra_info("socket")
        if info == "is_readable":  # kept here unread, or waiting in the socket
            connection = self._connection
            socket_ = self._transport.get_extra_info("socket")
            return bool(connection.buffer) or connection.eof or is_readable(socket_)
        return None


class AsyncioBackend(httpcore.AsyncNetworkBackend):
    async def connect_tcp(
        self,
        host: str,
        port: int,
        timeout: float | None = None,
        local_address: str | None = None,
        socket_options: Iterable[httpcore.SOCKET_OPTION] | None = None,
    ) -> httpcore.AsyncNetworkStream:
        loop = asyncio.get_running_loop()
        local = (local_address, 0) if local_address is not None else None
        try:
            transport, connection = await asyncio.wait_for(
                loop.create_connection(_Connection, host, port, local_addr=local), timeout
            )
        except TimeoutError as exc:
            raise httpcore.ConnectTimeout(f"timed out connecting to {host}:{port}") from exc
        except OSError as exc:
            raise httpcore.ConnectError(str(exc)) from exc
        raw = transport.get_extra_info("socket")
        if raw is not None:
            raw.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
            for option in socket_options or ():
                raw.setsockopt(*option)
        return AsyncioStream(transport, connection)

    async def connect_unix_socket(
        self,
        path: str,
        timeout: float | None = None,
        socket_options: Iterable[httpcore.SOCKET_OPTION] | None = None,
    ) -> httpcore.AsyncNetworkStream:
        raise httpcore.ConnectError("unix sockets are not used")

    async def sleep(self, seconds: float) -> None:
        await asyncio.sleep(seconds)
