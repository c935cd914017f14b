"""Configuration of the safe fetcher: SSRF policy, size caps, redirects, timeouts, pool size."""

from __future__ import annotations

import math
from dataclasses import dataclass

from scrapejobs_shared.config.settings import DEFAULT_USER_AGENT
from scrapejobs_shared.options.proxy_pools import NO_PROXIES, ProxyPool
from scrapejobs_worker.fetching.address_policy import (
    DEFAULT_ALLOWED_PORTS,
    DEFAULT_BLOCKED_HOST_SUFFIXES,
    DEFAULT_BLOCKED_HOSTNAMES,
    AddressPolicy,
    normalize_hostname,
    parse_networks,
)

MiB = 1024 * 1024


@dataclass(frozen=True, slots=True)
class FetchPolicy:
    """Everything the composition root may tune. The defaults are the production settings.

    ``allowlist`` holds CIDR networks (e.g. ``("127.0.0.0/8", "::1/128")``) that are reachable
    even though not globally routable, on any port but ``refused_ports`` (the local stack's
    own emulators and services); it must stay empty in production.
    """

    allowlist: tuple[str, ...] = ()
    refused_ports: tuple[int, ...] = ()
    allowed_ports: tuple[int, ...] = DEFAULT_ALLOWED_PORTS
    blocked_hostnames: tuple[str, ...] = DEFAULT_BLOCKED_HOSTNAMES
    blocked_host_suffixes: tuple[str, ...] = DEFAULT_BLOCKED_HOST_SUFFIXES
    max_redirects: int = 5
    max_body_bytes: int = 10 * MiB  # raw bytes on the wire; beyond: truncated response
    max_decoded_bytes: int = 20 * MiB  # after Content-Encoding; beyond: truncate or refuse
    max_compression_ratio: float = 100.0  # decoded/raw beyond the decoded cap => bomb
    user_agent: str = DEFAULT_USER_AGENT
    max_connections: int = 100
    keepalive_expiry_s: float = 5.0  # an idle connection is closed after this
    connect_timeout_s: float = 10.0
    read_timeout_s: float = 20.0  # per socket read; the overall deadline is the request's
    max_deadline_s: float = 120.0  # FetchRequest.timeout_s is clamped to this
    # whether FetchRequest.verify_tls false is honoured (SCRAPEJOBS_ALLOW_UNVERIFIED_TLS):
    # off, every certificate is verified whatever the task says
    allow_unverified_tls: bool = True
    proxies: ProxyPool = NO_PROXIES  # the pools a job's pages may go through
    proxy_bench_s: float = 30.0  # a proxy that failed is tried again after the others for this
    proxy_sticky: bool = False  # a session's requests to a host keep to one proxy while it is up

    def __post_init__(self) -> None:
        parse_networks(self.allowlist)  # fail fast on a malformed CIDR
        _require(all(0 < p < 65536 for p in self.allowed_ports), "allowed_ports out of range")
        _require(self.max_redirects >= 0, "max_redirects must be >= 0")
        _require(self.max_body_bytes > 0, "max_body_bytes must be > 0")
        _require(self.max_decoded_bytes > 0, "max_decoded_bytes must be > 0")
        _require(self.max_compression_ratio >= 1, "max_compression_ratio must be >= 1")
        _require(self.max_connections > 0, "max_connections must be > 0")
        for value in (self.connect_timeout_s, self.read_timeout_s, self.max_deadline_s):
            _require(math.isfinite(value) and value > 0, "timeouts must be finite and > 0")

    def address_policy(self) -> AddressPolicy:
        return AddressPolicy(
            allowlist=parse_networks(self.allowlist),
            refused_ports=frozenset(self.refused_ports),
            allowed_ports=frozenset(self.allowed_ports),
            blocked_hostnames=frozenset(normalize_hostname(h) for h in self.blocked_hostnames),
            blocked_host_suffixes=tuple(s.lower() for s in self.blocked_host_suffixes),
        )


def _require(condition: bool, message: str) -> None:
    if not condition:
        raise ValueError(message)
