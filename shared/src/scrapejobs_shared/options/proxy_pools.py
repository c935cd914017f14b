"""Proxy pools: the proxies a deployment routes pages through, each of a tier (``basic``, or
``stealth``: a pool the operator labels so, not a promise) and maybe of a country, and what a
page's fetch asks of them (``ProxyChoice``).

A proxy's credentials are never logged, answered or put in an error: everything names a proxy
by its ``label`` (``scheme://host:port``). ``SCRAPEJOBS_PROXIES`` is a JSON list of
``{"url": "http://user:pass@host:port", "country": "DE", "tier": "basic"}`` (``url`` alone is
enough: ``http://``, ``https://`` or ``socks5://``)."""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field
from typing import Any, Literal, get_args
from urllib.parse import quote, unquote, urlsplit

from scrapejobs_shared.errors import InvalidInput

ProxyTier = Literal["basic", "stealth"]
TIERS: tuple[ProxyTier, ...] = get_args(ProxyTier)
DEFAULT_PORTS = {"http": 80, "https": 443, "socks5": 1080}
COUNTRY = re.compile(r"^[A-Z]{2}$")  # ISO 3166-1 alpha-2, upper case
ENTRY_KEYS = frozenset({"url", "country", "tier"})
MAX_PROXIES = 1000


class InvalidProxies(InvalidInput):
    """A pool's list that cannot be read; the message names the entry, never its credentials
    (a deployment's setting stops its start; a list given through the API is a 422)."""


@dataclass(frozen=True, slots=True)
class ProxyChoice:
    """What a page's fetch goes through: a proxy of ``tier``, in ``country`` (None: any)."""

    tier: ProxyTier = "basic"
    country: str | None = None

    def __str__(self) -> str:
        return self.tier if self.country is None else f"{self.tier} in {self.country}"


@dataclass(frozen=True, slots=True)
class ProxyServer:
    scheme: Literal["http", "https", "socks5"]
    host: str
    port: int
    country: str | None = None
    tier: ProxyTier = "basic"
    username: str | None = field(default=None, repr=False)
    password: str | None = field(default=None, repr=False)

    @property
    def label(self) -> str:
        """How logs, counts and answers name the proxy: no credentials."""
        host = f"[{self.host}]" if ":" in self.host else self.host
        return f"{self.scheme}://{host}:{self.port}"

    def serves(self, choice: ProxyChoice) -> bool:
        return self.tier == choice.tier and choice.country in (None, self.country)

    def entry(self) -> dict[str, str]:
        """The entry ``parse_pool`` reads back, credentials included: for the store alone."""
        user = ""
        if self.username is not None:
            user = quote(self.username, safe="")
            if self.password is not None:
                user += ":" + quote(self.password, safe="")
            user += "@"
        url = self.label.replace("://", f"://{user}", 1)
        entry = {"url": url, "tier": self.tier}
        if self.country is not None:
            entry["country"] = self.country
        return entry


@dataclass(frozen=True, slots=True)
class ProxyPool:
    """The proxies of a deployment, or of a tenant (``owner``), in the order listed (round
    robin starts there)."""

    servers: tuple[ProxyServer, ...] = ()
    owner: str | None = field(default=None, compare=False)  # the tenant (None: the deployment)

    def serving(self, choice: ProxyChoice) -> tuple[ProxyServer, ...]:
        return tuple(server for server in self.servers if server.serves(choice))

    def offers(self, choice: ProxyChoice) -> bool:
        return any(server.serves(choice) for server in self.servers)

    def countries(self, tier: ProxyTier) -> list[str]:
        """The countries ``tier`` serves, for an error that says what is served."""
        return sorted({s.country for s in self.servers if s.tier == tier and s.country})

    def __bool__(self) -> bool:
        return bool(self.servers)


NO_PROXIES = ProxyPool()


def parse_pool(text: str, source: str = "SCRAPEJOBS_PROXIES") -> ProxyPool:
    """The pool a JSON list describes (empty text: no proxies). ``InvalidProxies`` names
    ``source`` and the entry at fault, never a credential."""
    if not text.strip():
        return NO_PROXIES
    try:
        entries = json.loads(text)
    except json.JSONDecodeError as exc:
        raise InvalidProxies(
            f"{source} is not JSON (line {exc.lineno}, column {exc.colno})"
        ) from None
    return pool_of_entries(entries, source)


def pool_of_entries(entries: Any, source: str, owner: str | None = None) -> ProxyPool:
    """The pool of a list of entries (parsed JSON), as ``parse_pool`` reads them."""
    if not isinstance(entries, list):
        raise InvalidProxies(f"{source} is a JSON list of proxies")
    if len(entries) > MAX_PROXIES:
        raise InvalidProxies(f"{source} lists more than {MAX_PROXIES} proxies")
    servers = tuple(_server(entry, f"{source}[{n}]") for n, entry in enumerate(entries))
    return ProxyPool(servers, owner)


def _server(entry: Any, where: str) -> ProxyServer:
    if isinstance(entry, str):
        entry = {"url": entry}
    if not isinstance(entry, dict) or not isinstance(entry.get("url"), str):
        raise InvalidProxies(f"{where}: a proxy is an object with a url")
    if unknown := sorted(set(entry) - ENTRY_KEYS):
        raise InvalidProxies(f"{where}: unknown keys {unknown} (url, country, tier)")
    try:
        parts = urlsplit(entry["url"])
        port = parts.port
    except ValueError:
        raise InvalidProxies(f"{where}.url: not a URL with a valid port") from None
    scheme = parts.scheme.lower()
    if scheme not in DEFAULT_PORTS:
        raise InvalidProxies(f"{where}.url: the scheme is http, https or socks5")
    if not parts.hostname:
        raise InvalidProxies(f"{where}.url: no host")
    if parts.path not in ("", "/") or parts.query or parts.fragment:
        raise InvalidProxies(f"{where}.url: a proxy's URL has no path, query or fragment")
    country = entry.get("country")
    if country is not None and not (isinstance(country, str) and COUNTRY.match(country.upper())):
        raise InvalidProxies(f"{where}.country: an ISO 3166-1 alpha-2 code such as DE")
    tier = entry.get("tier", "basic")
    if tier not in TIERS:
        raise InvalidProxies(f"{where}.tier: basic or stealth")
    return ProxyServer(
        scheme=scheme,  # type: ignore[arg-type]  # checked against DEFAULT_PORTS
        host=parts.hostname,
        port=port or DEFAULT_PORTS[scheme],
        country=country.upper() if country else None,
        tier=tier,
        username=unquote(parts.username) if parts.username is not None else None,
        password=unquote(parts.password) if parts.password is not None else None,
    )
