"""Resolve a destination host once and vet every address it resolves to.

A literal IP address is used as is, without DNS. Anything else goes through the system
resolver (``loop.getaddrinfo``), which is also what turns odd numeric spellings such as
``2130706433`` or ``0x7f.0.0.1`` into addresses, so the address that is checked is exactly
the one that would be connected to. If ANY returned address is refused, the whole destination
is refused (an attacker-controlled zone could otherwise mix a public and a private address).
The vetted addresses are then pinned for the connection (see ``pinned_connector``): the host is
never resolved a second time, which closes the DNS-rebinding window.
"""

from __future__ import annotations

import asyncio
import ipaddress
import logging
import socket
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass
from typing import Any, TypeAlias

from scrapejobs_shared.ports.fetcher import PermanentFetchError, TransientFetchError
from scrapejobs_worker.fetching.address_policy import AddressPolicy, IPAddress

logger = logging.getLogger(__name__)

AddrInfo: TypeAlias = tuple[Any, Any, int, str, tuple[Any, ...]]
GetAddrInfo: TypeAlias = Callable[[str, int], Awaitable[Sequence[AddrInfo]]]

# getaddrinfo errors that mean "this name has no address", as opposed to "try again later".
_PERMANENT_GAI_ERRORS = frozenset(
    code
    for code in (
        socket.EAI_NONAME,
        getattr(socket, "EAI_NODATA", None),
        getattr(socket, "EAI_ADDRFAMILY", None),
    )
    if code is not None
)


@dataclass(frozen=True, slots=True)
class ResolvedDestination:
    """A host name (as it appears in the URL) and the vetted addresses to connect to."""

    host: str
    port: int
    addresses: tuple[IPAddress, ...]


async def system_getaddrinfo(host: str, port: int) -> Sequence[AddrInfo]:
    loop = asyncio.get_running_loop()
    return await loop.getaddrinfo(host, port, type=socket.SOCK_STREAM, proto=socket.IPPROTO_TCP)


def parse_literal_ip(host: str) -> IPAddress | None:
    """The address if ``host`` is a canonical IPv4/IPv6 literal (no brackets), else None."""
    try:
        return ipaddress.ip_address(host)
    except ValueError:
        return None


class Resolver:
    """Resolves a host once, refusing it unless every address passes the policy."""

    def __init__(self, policy: AddressPolicy, getaddrinfo: GetAddrInfo | None = None) -> None:
        self._policy = policy
        self._getaddrinfo = getaddrinfo or system_getaddrinfo

    async def resolve(self, host: str, port: int) -> ResolvedDestination:
        self._policy.check_hostname(host)
        self._policy.check_port_early(port)
        literal = parse_literal_ip(host)
        addresses = (literal,) if literal is not None else await self._lookup(host, port)
        for address in addresses:
            self._policy.check_address(address, port)
        return ResolvedDestination(host=host, port=port, addresses=addresses)

    async def _lookup(self, host: str, port: int) -> tuple[IPAddress, ...]:
        try:
            infos = await self._getaddrinfo(host, port)
        except socket.gaierror as exc:
            raise _dns_error(host, exc) from exc
        except (UnicodeError, ValueError) as exc:
            raise PermanentFetchError(
                f"cannot resolve {host!r}: {exc}", reason="dns_error"
            ) from exc
        addresses = _unique_addresses(infos)
        if not addresses:
            raise PermanentFetchError(f"{host!r} has no address", reason="dns_error")
        logger.debug("resolved %s to %s", host, [str(a) for a in addresses])
        return addresses


def _dns_error(host: str, exc: socket.gaierror) -> PermanentFetchError | TransientFetchError:
    detail = f"cannot resolve {host!r}: {exc.strerror or exc}"
    if exc.errno in _PERMANENT_GAI_ERRORS:
        return PermanentFetchError(detail, reason="dns_error")
    return TransientFetchError(detail, reason="dns_error")


def _unique_addresses(infos: Sequence[AddrInfo]) -> tuple[IPAddress, ...]:
    """Addresses in resolver order, de-duplicated; an unparsable one fails closed."""
    seen: dict[IPAddress, None] = {}
    for info in infos:
        raw = str(info[4][0])
        try:
            seen.setdefault(ipaddress.ip_address(raw), None)
        except ValueError as exc:
            raise PermanentFetchError(
                f"resolver returned an unusable address {raw!r}", reason="dns_error"
            ) from exc
    return tuple(seen)
