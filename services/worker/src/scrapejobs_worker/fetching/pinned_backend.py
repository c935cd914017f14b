"""An httpcore network backend that only connects to addresses vetted for the current request.

The fetcher resolves and vets each hop's host itself, then runs the request inside
``pin_destination(destination)``, which stores the vetted addresses in a context variable.
httpcore calls ``connect_tcp(host, port)`` from within that same task, so the backend sees the
pin: it refuses any (host, port) other than the pinned one, re-checks each address against the
policy right before connecting (defence in depth), and connects to the IP address instead of
the name. The URL, and therefore the Host header, TLS SNI and certificate verification, keep
the host name. There is no code path on which httpcore resolves a name itself.

Connections kept alive in the pool are keyed by (scheme, host, port) and were all opened to an
address that passed the same immutable policy, so reusing one cannot reach a refused address;
a host that now resolves to a refused address is refused during resolution, before any request
is sent on any connection.
"""

from __future__ import annotations

import contextvars
import ipaddress
import logging
from collections.abc import Iterable, Iterator
from contextlib import contextmanager

import httpcore

from scrapejobs_shared.ports.fetcher import BlockedDestination
from scrapejobs_worker.fetching.address_policy import AddressPolicy
from scrapejobs_worker.fetching.asyncio_backend import AsyncioBackend, AsyncioStream
from scrapejobs_worker.fetching.connected_stream import ConnectedStream
from scrapejobs_worker.fetching.resolver import ResolvedDestination

logger = logging.getLogger(__name__)

_PINNED: contextvars.ContextVar[ResolvedDestination | None] = contextvars.ContextVar(
    "scrapejobs_pinned_destination", default=None
)


@contextmanager
def pin_destination(destination: ResolvedDestination) -> Iterator[None]:
    """Make ``destination`` the only one the backend will connect to, in this context."""
    token = _PINNED.set(destination)
    try:
        yield
    finally:
        _PINNED.reset(token)


def _pinned_for(host: str, port: int) -> ResolvedDestination:
    pinned = _PINNED.get()
    if pinned is None:
        raise BlockedDestination(f"no vetted addresses pinned for {host}:{port}")
    if pinned.host.lower() != host.lower() or pinned.port != port:
        raise BlockedDestination(
            f"connection to {host}:{port} does not match the pinned {pinned.host}:{pinned.port}"
        )
    return pinned


class PinnedNetworkBackend(httpcore.AsyncNetworkBackend):
    """Wraps a real backend (asyncio's transports by default: asyncio_backend.py) and connects
    only to pinned, vetted addresses."""

    def __init__(
        self, policy: AddressPolicy, inner: httpcore.AsyncNetworkBackend | None = None
    ) -> None:
        self._policy = policy
        self._inner = inner or AsyncioBackend()

    async def connect_tcp(
        self,
        host: str,
        port: int,
        timeout: float | None = None,
        local_address: str | None = None,
        socket_options: Iterable[httpcore.SOCKET_OPTION] | None = None,
    ) -> httpcore.AsyncNetworkStream:
        pinned = _pinned_for(host, port)
        last_error: Exception | None = None
        for address in pinned.addresses:
            self._policy.check_address(address, port)
            try:
                stream = await self._inner.connect_tcp(
                    address.compressed, port, timeout, local_address, socket_options
                )
            except (httpcore.ConnectError, httpcore.ConnectTimeout) as exc:
                logger.debug("connect to %s (%s):%d failed: %s", host, address, port, exc)
                last_error = exc
                continue
            if isinstance(stream, AsyncioStream):  # its addresses are known already
                return stream
            return ConnectedStream.of(stream)
        if last_error is None:
            raise BlockedDestination(f"no vetted address for {host}:{port}")
        raise last_error

    async def connect_unix_socket(
        self,
        path: str,
        timeout: float | None = None,
        socket_options: Iterable[httpcore.SOCKET_OPTION] | None = None,
    ) -> httpcore.AsyncNetworkStream:
        raise BlockedDestination("unix sockets are never used by the fetcher")

    async def sleep(self, seconds: float) -> None:
        await self._inner.sleep(seconds)


def verify_peer(network_stream: object, policy: AddressPolicy) -> None:
    """Re-check the address a response actually came from (covers pooled connections too).

    Fails closed: a response whose peer address cannot be determined is refused.
    """
    get_extra_info = getattr(network_stream, "get_extra_info", None)
    peer = get_extra_info("server_addr") if callable(get_extra_info) else None
    if not isinstance(peer, tuple) or len(peer) < 2:
        raise BlockedDestination("cannot determine the address of the peer")
    try:
        address = ipaddress.ip_address(peer[0])
    except ValueError as exc:
        raise BlockedDestination("unusable peer address") from exc
    policy.check_address(address, int(peer[1]))
