"""Which destinations the worker may open a TCP connection to (the SSRF guard's core).

An address is refused unless it is plainly globally routable unicast. The refusal table below
covers the IANA special-purpose registries (loopback, RFC 1918, link-local including the
metadata server 169.254.169.254, CGNAT, multicast, reserved, documentation, benchmarking, ULA,
site-local...). IPv6 addresses that embed an IPv4 address are unwrapped and the embedded
IPv4 address(es) checked: IPv4-mapped (::ffff:a.b.c.d) and NAT64 (64:ff9b::/96) forms are
judged by the embedded address alone (that is where a packet ends up); 6to4 (2002::/16) and
Teredo (2001::/32, server and de-obfuscated client address) are refused if an embedded address
is, and Teredo is refused anyway as part of 2001::/23. The deprecated IPv4-compatible form
(::a.b.c.d) is refused outright, as is any IPv6 address outside 2000::/3 (the only block IANA
allocates for global unicast).

An explicit allowlist of networks overrides the refusal (for local development and tests);
its production default is empty. Ports are restricted to ``allowed_ports`` except on
allowlisted addresses. A few host names (the metadata server's, ``*.internal``) are refused by
name, before any DNS lookup, whatever the allowlist says.
"""

from __future__ import annotations

import ipaddress
from collections.abc import Iterable
from dataclasses import dataclass
from typing import TypeAlias

from scrapejobs_shared.ports.fetcher import BlockedDestination

IPAddress: TypeAlias = ipaddress.IPv4Address | ipaddress.IPv6Address
IPNetwork: TypeAlias = ipaddress.IPv4Network | ipaddress.IPv6Network

_V4 = ipaddress.IPv4Network
_V6 = ipaddress.IPv6Network

_BLOCKED_V4: tuple[tuple[ipaddress.IPv4Network, str], ...] = (
    (_V4("0.0.0.0/8"), "this-network"),
    (_V4("10.0.0.0/8"), "private"),
    (_V4("100.64.0.0/10"), "shared address space (CGNAT)"),
    (_V4("127.0.0.0/8"), "loopback"),
    (_V4("169.254.0.0/16"), "link-local (cloud metadata)"),
    (_V4("172.16.0.0/12"), "private"),
    (_V4("192.0.0.0/24"), "IETF protocol assignments"),
    (_V4("192.0.2.0/24"), "documentation"),
    (_V4("192.88.99.0/24"), "6to4 relay anycast"),
    (_V4("192.168.0.0/16"), "private"),
    (_V4("198.18.0.0/15"), "benchmarking"),
    (_V4("198.51.100.0/24"), "documentation"),
    (_V4("203.0.113.0/24"), "documentation"),
    (_V4("224.0.0.0/4"), "multicast"),
    (_V4("240.0.0.0/4"), "reserved / broadcast"),
)

_BLOCKED_V6: tuple[tuple[ipaddress.IPv6Network, str], ...] = (
    (_V6("64:ff9b:1::/48"), "local-use NAT64"),
    (_V6("100::/64"), "discard-only"),
    (_V6("2001::/23"), "IETF protocol assignments"),
    (_V6("2001:db8::/32"), "documentation"),
    (_V6("3fff::/20"), "documentation"),
    (_V6("5f00::/16"), "SRv6 SIDs"),
    (_V6("fc00::/7"), "unique local"),
    (_V6("fe80::/10"), "link-local"),
    (_V6("fec0::/10"), "site-local"),
    (_V6("ff00::/8"), "multicast"),
)

_GLOBAL_UNICAST_V6 = _V6("2000::/3")
_IPV4_COMPATIBLE = _V6("::/96")
_NAT64 = _V6("64:ff9b::/96")

DEFAULT_ALLOWED_PORTS: tuple[int, ...] = (80, 443, 8080, 8443)
DEFAULT_BLOCKED_HOSTNAMES: tuple[str, ...] = ("metadata", "metadata.google.internal")
DEFAULT_BLOCKED_HOST_SUFFIXES: tuple[str, ...] = (".internal",)


def parse_networks(cidrs: Iterable[str]) -> tuple[IPNetwork, ...]:
    """Parse CIDR strings strictly (host bits must be zero, so typos are caught)."""
    return tuple(ipaddress.ip_network(cidr, strict=True) for cidr in cidrs)


def normalize_hostname(host: str) -> str:
    """Lower-case and drop trailing dots (``Metadata.Google.Internal.`` is the same name)."""
    return host.lower().rstrip(".")


def blocked_reason(ip: IPAddress) -> str | None:
    """Why ``ip`` must not be connected to, or None if it is globally routable unicast."""
    if isinstance(ip, ipaddress.IPv4Address):
        return _blocked_v4_reason(ip)
    return _blocked_v6_reason(ip)


def _blocked_v4_reason(ip: ipaddress.IPv4Address) -> str | None:
    for network, label in _BLOCKED_V4:
        if ip in network:
            return f"{label} ({network})"
    if not ip.is_global or ip.is_multicast or ip.is_reserved:
        return "not globally routable"
    return None


def _blocked_v6_reason(ip: ipaddress.IPv6Address) -> str | None:
    if ip.scope_id:
        return "scoped IPv6 address"
    embedded = _embedded_ipv4(ip)
    if embedded is not None:
        reason = _embedded_reason(embedded)
        if reason is not None or ip.ipv4_mapped is not None or ip in _NAT64:
            return reason  # mapped and NAT64 forms reach exactly the embedded address
    if ip in _IPV4_COMPATIBLE:
        return "unspecified / loopback / IPv4-compatible (::/96)"
    if ip not in _GLOBAL_UNICAST_V6:
        return "outside global unicast 2000::/3"
    for network, label in _BLOCKED_V6:
        if ip in network:
            return f"{label} ({network})"
    return None


def _embedded_ipv4(ip: ipaddress.IPv6Address) -> tuple[ipaddress.IPv4Address, ...] | None:
    """The IPv4 address(es) a translation form reaches, or None if ``ip`` is not one."""
    if ip.ipv4_mapped is not None:
        return (ip.ipv4_mapped,)
    if ip in _NAT64:
        return (ipaddress.IPv4Address(int(ip) & 0xFFFFFFFF),)
    if ip.sixtofour is not None:
        return (ip.sixtofour,)
    if ip.teredo is not None:
        server, client = ip.teredo
        return (server, client)
    return None


def _embedded_reason(embedded: tuple[ipaddress.IPv4Address, ...]) -> str | None:
    for v4 in embedded:
        reason = _blocked_v4_reason(v4)
        if reason is not None:
            return f"embeds {v4}: {reason}"
    return None


def unwrap_mapped(ip: IPAddress) -> IPAddress:
    """``::ffff:a.b.c.d`` is the IPv4 address a.b.c.d on a dual-stack socket."""
    if isinstance(ip, ipaddress.IPv6Address) and ip.ipv4_mapped is not None:
        return ip.ipv4_mapped
    return ip


@dataclass(frozen=True, slots=True)
class AddressPolicy:
    """Decides whether a (host name, address, port) destination may be connected to."""

    allowlist: tuple[IPNetwork, ...] = ()
    refused_ports: frozenset[int] = frozenset()  # on allowlisted addresses too
    allowed_ports: frozenset[int] = frozenset(DEFAULT_ALLOWED_PORTS)
    blocked_hostnames: frozenset[str] = frozenset(DEFAULT_BLOCKED_HOSTNAMES)
    blocked_host_suffixes: tuple[str, ...] = DEFAULT_BLOCKED_HOST_SUFFIXES

    def is_allowlisted(self, ip: IPAddress) -> bool:
        candidates = {ip, unwrap_mapped(ip)}
        return any(c in network for c in candidates for network in self.allowlist)

    def check_hostname(self, host: str) -> None:
        """Refuse names that point at the metadata server or internal DNS, by name."""
        name = normalize_hostname(host)
        if name in self.blocked_hostnames or name.endswith(self.blocked_host_suffixes):
            raise BlockedDestination(f"host name {host!r} is refused")

    def check_port_early(self, port: int) -> None:
        """Refuse a port before DNS when no allowlisted address could make it acceptable."""
        if port in self.refused_ports or (not self.allowlist and port not in self.allowed_ports):
            raise BlockedDestination(f"port {port} is not allowed")

    def check_address(self, ip: IPAddress, port: int) -> None:
        """Raise BlockedDestination unless a TCP connection to ``ip``:``port`` is allowed.

        The message names the kind of address, never the address: a task's error and a
        webhook's record are read by the caller, who must not learn what a name resolves to
        inside our network."""
        if port in self.refused_ports:
            raise BlockedDestination(f"port {port} is not allowed")
        if self.is_allowlisted(ip):
            return
        reason = blocked_reason(ip)
        if reason is not None:
            raise BlockedDestination(f"the destination resolves to a refused address ({reason})")
        if port not in self.allowed_ports:
            raise BlockedDestination(f"port {port} is not allowed")
