"""The fetcher's connector: aiohttp connects only to addresses vetted for the current request.

The fetcher resolves and vets each hop's host itself, then sends the request inside
``pin_destination(destination)``, which stores the vetted addresses in a context variable.
aiohttp asks its resolver for the host's addresses, and creates each socket through a socket
factory, from within the request's own task (or a task copied from it), so both see the pin:

* ``PinnedResolver`` answers the pinned addresses, and refuses any (host, port) other than
  the pinned one: aiohttp never resolves a name itself.
* ``PinnedSockets`` re-checks, right before each socket is created, that its address is one of
  the pinned ones and passes the policy (defence in depth; it also covers IP-literal hosts,
  which aiohttp does not send through a resolver).

The URL, and therefore the Host header, TLS SNI and certificate verification, keep the host
name. Connections kept alive in the pool are keyed by (host, port, TLS) and were all opened to
an address that passed the same immutable policy, so reusing one cannot reach a refused address;
a host that now resolves to a refused address is refused during resolution, before any request
is sent on any connection. ``verify_peer`` re-checks the address every response came from.
"""

from __future__ import annotations

import contextvars
import ipaddress
import socket
import ssl
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any, NamedTuple

import aiohttp
from aiohttp.abc import AbstractResolver, ResolveResult

from scrapejobs_shared.ports.fetcher import BlockedDestination
from scrapejobs_worker.fetching.address_policy import AddressPolicy
from scrapejobs_worker.fetching.config import FetchPolicy
from scrapejobs_worker.fetching.resolver import ResolvedDestination

_PINNED: contextvars.ContextVar[ResolvedDestination | None] = contextvars.ContextVar(
    "scrapejobs_pinned_destination", default=None
)

AddrInfo = tuple[int, int, int, str, tuple[object, ...]]


class VettedAddress(NamedTuple):
    address: ipaddress.IPv4Address | ipaddress.IPv6Address
    port: int


@contextmanager
def pin_destination(destination: ResolvedDestination) -> Iterator[None]:
    """Make ``destination`` the only one the connector will connect to, in this context."""
    token = _PINNED.set(destination)
    try:
        yield
    finally:
        _PINNED.reset(token)


def pinned_for(host: str, port: int) -> ResolvedDestination:
    pinned = _PINNED.get()
    if pinned is None:
        raise BlockedDestination(f"no vetted addresses pinned for {host}:{port}")
    if pinned.host.lower() != host.lower() or pinned.port != port:
        raise BlockedDestination(
            f"connection to {host}:{port} does not match the pinned {pinned.host}:{pinned.port}"
        )
    return pinned


class PinnedResolver(AbstractResolver):
    """aiohttp's resolver: the pinned, vetted addresses of the host, in the resolver's order."""

    async def resolve(
        self, host: str, port: int = 0, family: socket.AddressFamily = socket.AF_INET
    ) -> list[ResolveResult]:
        pinned = pinned_for(host, port)
        return [
            ResolveResult(
                hostname=host,
                host=address.compressed,
                port=port,
                family=socket.AF_INET6 if address.version == 6 else socket.AF_INET,
                proto=0,
                flags=0,
            )
            for address in pinned.addresses
        ]

    async def close(self) -> None:
        return None


class PinnedSockets:
    """aiohttp's socket factory: a socket only for a pinned address that passes the policy."""

    def __init__(self, policy: AddressPolicy) -> None:
        self._policy = policy

    def __call__(self, addr_info: AddrInfo) -> socket.socket:
        family, kind, proto, _, sockaddr = addr_info
        vetted_address(sockaddr, self._policy)
        return socket.socket(family=family, type=kind, proto=proto)


def vetted_address(sockaddr: tuple[object, ...], policy: AddressPolicy) -> VettedAddress:
    """The address a connection is about to be opened to (a socket's, or a proxy's tunnel's),
    once it is checked to be one of the pinned ones and to pass the policy."""
    address = ipaddress.ip_address(str(sockaddr[0]))
    port = int(str(sockaddr[1]))
    pinned = _PINNED.get()
    if pinned is None or port != pinned.port or address not in pinned.addresses:
        raise BlockedDestination(f"connection to {address}:{port} was not vetted")
    policy.check_address(address, port)
    return VettedAddress(address, port)


def pinned_connector(policy: FetchPolicy, ssl_context: ssl.SSLContext) -> aiohttp.TCPConnector:
    """A connector whose every connection goes to a pinned, re-checked address. Addresses are
    tried one after another, in the resolver's order (no racing of families). Needs a running
    event loop."""
    return aiohttp.TCPConnector(
        socket_factory=PinnedSockets(policy.address_policy()),
        **connector_settings(policy, ssl_context),
    )


def connector_settings(policy: FetchPolicy, ssl_context: ssl.SSLContext) -> dict[str, Any]:
    """What every connector of the fetcher is made with (tunnel_connector.py's too)."""
    return {
        "ssl": ssl_context,
        "resolver": PinnedResolver(),
        "use_dns_cache": False,
        "happy_eyeballs_delay": None,
        "limit": policy.max_connections,
        "limit_per_host": 0,
        "keepalive_timeout": policy.keepalive_expiry_s,
    }


def verify_peer(peer: object, policy: AddressPolicy) -> None:
    """Re-check the address a response actually came from (covers pooled connections too).

    Fails closed: a response whose peer address cannot be determined is refused.
    """
    if not isinstance(peer, tuple) or len(peer) < 2:
        raise BlockedDestination("cannot determine the address of the peer")
    try:
        address = ipaddress.ip_address(peer[0])
    except ValueError as exc:
        raise BlockedDestination("unusable peer address") from exc
    policy.check_address(address, int(peer[1]))
