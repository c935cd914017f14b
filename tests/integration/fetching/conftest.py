"""Loopback HTTP servers and spies for the safe fetcher's integration tests.

The servers run in the test event loop (asyncio streams), bind only 127.0.0.x / ::1, count
every accepted connection, and record every request they parse. Tests reach everything through
fixtures (nothing is imported from this conftest), so module naming cannot collide.
"""

from __future__ import annotations

import asyncio
import contextlib
import socket
import ssl
from collections.abc import AsyncIterator, Awaitable, Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path

import pytest

from scrapejobs_devstack.local_proxy import LocalProxy
from scrapejobs_worker.fetching import FetchPolicy, SafeFetcher


@dataclass
class ReceivedRequest:
    method: str
    target: str
    headers: dict[str, str]

    @property
    def path(self) -> str:
        return self.target.split("?", 1)[0]


Handler = Callable[[ReceivedRequest, asyncio.StreamWriter], Awaitable[None]]


@dataclass
class LocalHTTPServer:
    """A tiny keep-alive HTTP/1.1 server; unknown paths get 404."""

    routes: dict[str, Handler] = field(default_factory=dict)
    connections: int = 0
    requests: list[ReceivedRequest] = field(default_factory=list)
    bytes_sent: int = 0
    cut: asyncio.Event = field(default_factory=asyncio.Event)
    port: int = 0
    hosts: list[str] = field(default_factory=list)
    _servers: list[asyncio.Server] = field(default_factory=list)
    _tasks: set[asyncio.Task[None]] = field(default_factory=set)

    async def start(
        self,
        hosts: tuple[str, ...] = ("127.0.0.1", "::1"),
        port: int = 0,
        ssl_context: ssl.SSLContext | None = None,
    ) -> None:
        for host in hosts:
            try:
                server = await asyncio.start_server(
                    self._serve, host, port or self.port, ssl=ssl_context
                )
            except OSError:
                continue  # e.g. no IPv6 loopback; tests needing it skip
            self._servers.append(server)
            self.hosts.append(host)
            self.port = self.port or server.sockets[0].getsockname()[1]
        if not self._servers:
            raise RuntimeError(f"could not bind any of {hosts}")

    async def stop(self) -> None:
        for server in self._servers:
            server.close()
        for task in list(self._tasks):
            task.cancel()
        for task in list(self._tasks):
            with contextlib.suppress(BaseException):
                await task

    def serve(
        self,
        path: str,
        body: bytes = b"ok",
        headers: dict[str, str] | None = None,
        status: int = 200,
    ) -> None:
        async def handler(_request: ReceivedRequest, writer: asyncio.StreamWriter) -> None:
            await self.send_response(writer, status, body, headers)

        self.routes[path] = handler

    def redirect(self, path: str, location: str, status: int = 302) -> None:
        self.serve(path, b"", {"Location": location}, status)

    @staticmethod
    def response_head(status: int, headers: dict[str, str] | None = None) -> bytes:
        lines = [f"HTTP/1.1 {status} X"]
        lines += [f"{k}: {v}" for k, v in (headers or {}).items()]
        return ("\r\n".join(lines) + "\r\n\r\n").encode("latin-1")

    @staticmethod
    async def send_response(
        writer: asyncio.StreamWriter,
        status: int = 200,
        body: bytes = b"",
        headers: dict[str, str] | None = None,
    ) -> None:
        all_headers = {"Content-Length": str(len(body)), **(headers or {})}
        writer.write(LocalHTTPServer.response_head(status, all_headers) + body)
        await writer.drain()

    def url(self, path: str = "/", host: str = "127.0.0.1", scheme: str = "http") -> str:
        netloc = f"[{host}]" if ":" in host else host
        return f"{scheme}://{netloc}:{self.port}{path}"

    async def _serve(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        task = asyncio.current_task()
        assert task is not None
        self._tasks.add(task)
        self.connections += 1
        try:
            while (request := await self._read_request(reader)) is not None:
                self.requests.append(request)
                handler = self.routes.get(request.path, _not_found)
                await handler(request, writer)
        except (ConnectionError, asyncio.IncompleteReadError):
            self.cut.set()
        finally:
            self._tasks.discard(task)
            writer.close()

    @staticmethod
    async def _read_request(reader: asyncio.StreamReader) -> ReceivedRequest | None:
        try:
            head = await reader.readuntil(b"\r\n\r\n")
        except asyncio.IncompleteReadError:
            return None
        request_line, *header_lines = head.decode("latin-1").split("\r\n")
        method, target, _version = request_line.split(" ", 2)
        headers = {}
        for line in header_lines:
            if line:
                name, _, value = line.partition(":")
                headers[name.strip().lower()] = value.strip()
        return ReceivedRequest(method, target, headers)


async def _not_found(_request: ReceivedRequest, writer: asyncio.StreamWriter) -> None:
    await LocalHTTPServer.send_response(writer, 404, b"not found")


@pytest.fixture
async def http_server() -> AsyncIterator[LocalHTTPServer]:
    server = LocalHTTPServer()
    await server.start()
    yield server
    await server.stop()


@pytest.fixture
async def server_factory() -> AsyncIterator[Callable[..., Awaitable[LocalHTTPServer]]]:
    started: list[LocalHTTPServer] = []

    async def start(
        hosts: tuple[str, ...] = ("127.0.0.1",),
        port: int = 0,
        ssl_context: ssl.SSLContext | None = None,
    ) -> LocalHTTPServer:
        server = LocalHTTPServer()
        await server.start(hosts, port, ssl_context)
        started.append(server)
        return server

    yield start
    for server in started:
        await server.stop()


@pytest.fixture
async def fetcher_factory() -> AsyncIterator[Callable[..., SafeFetcher]]:
    fetchers: list[SafeFetcher] = []

    def make(policy: FetchPolicy | None = None, **kwargs: object) -> SafeFetcher:
        fetcher = SafeFetcher(policy, **kwargs)  # type: ignore[arg-type]
        fetchers.append(fetcher)
        return fetcher

    yield make
    for fetcher in fetchers:
        await fetcher.aclose()


@dataclass
class ConnectSpy:
    attempts: list[tuple[str, int]] = field(default_factory=list)


@pytest.fixture
def connect_spy(monkeypatch: pytest.MonkeyPatch) -> ConnectSpy:
    """Records every TCP connection attempt made through the event loop's ``sock_connect``
    (how aiohttp connects), process-wide; the test servers accept, they never connect."""
    spy = ConnectSpy()
    real_connect = asyncio.selector_events.BaseSelectorEventLoop.sock_connect

    async def spying_connect(
        self: asyncio.selector_events.BaseSelectorEventLoop,
        sock: socket.socket,
        address: tuple[str, int],
    ) -> None:
        spy.attempts.append((address[0], address[1]))
        await real_connect(self, sock, address)

    monkeypatch.setattr(
        asyncio.selector_events.BaseSelectorEventLoop, "sock_connect", spying_connect
    )
    return spy


AddrInfoList = list[tuple[object, object, int, str, tuple[object, ...]]]


@pytest.fixture
def fake_dns() -> Callable[[dict[str, list[str]]], Callable[[str, int], Awaitable[AddrInfoList]]]:
    """Builds a getaddrinfo over a fixed table, so tests never touch real DNS for made-up
    names; ``lookups`` on the returned function records every query."""

    def build(table: dict[str, list[str]]) -> Callable[[str, int], Awaitable[AddrInfoList]]:
        lookups: list[str] = []

        async def lookup(host: str, port: int) -> AddrInfoList:
            lookups.append(host)
            answers = table.get(host)
            if answers is None:
                raise socket.gaierror(socket.EAI_NONAME, "Name or service not known")
            return [_addrinfo(a, port) for a in answers]

        lookup.lookups = lookups  # type: ignore[attr-defined]
        return lookup

    return build


def _addrinfo(address: str, port: int) -> tuple[object, object, int, str, tuple[object, ...]]:
    family = socket.AF_INET6 if ":" in address else socket.AF_INET
    return (family, socket.SOCK_STREAM, 6, "", (address, port))


@pytest.fixture
def free_port() -> int:
    """A loopback port with nothing listening on it (connection refused)."""
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port: int = sock.getsockname()[1]
    return port


@pytest.fixture
def proxies(tmp_path: Path) -> Iterator[Callable[[], LocalProxy]]:
    """Starts real proxies on loopback (scrapejobs_devstack/local_proxy.py), each stopped after
    the test."""
    started: list[LocalProxy] = []

    def start() -> LocalProxy:
        proxy = LocalProxy(tmp_path).start()
        started.append(proxy)
        return proxy

    yield start
    for proxy in started:
        proxy.stop()
