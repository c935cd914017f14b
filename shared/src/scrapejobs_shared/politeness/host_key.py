"""The politeness identity of a URL's origin, and where that origin's robots.txt lives.

Politeness (robots.txt, crawl delay, per-host concurrency and rate) is tracked per
*origin*: scheme, host and port, as RFC 9309 scopes a robots.txt file to them. The host is
taken from the extraction package's URL normalisation (lower-cased, IDNA-encoded), so the
key agrees with the URLs the crawl enqueues.

:func:`host_key` formats the origin as a Firestore document id: ``scheme~host~port`` with
the port always explicit (``https~example.com~443``), IPv6 hosts without brackets
(``http~::1~8080``). It never contains ``/``, is never ``.``/``..`` nor ``__*__`` (it
starts with the scheme), and stays within 1,500 bytes: an absurdly long host is replaced
by its SHA-256 digest (``https~sha256-<hex>~443``). The scheme comes first and the port
last, so the key is unambiguous even if a host contained ``~``.
"""

from __future__ import annotations

import functools
import hashlib
from typing import NamedTuple
from urllib.parse import urlsplit

from scrapejobs_shared.extraction.urls import normalize_http_url

DEFAULT_PORTS = {"http": 80, "https": 443}
MAX_KEY_BYTES = 1500
_SEPARATOR = "~"


class Origin(NamedTuple):
    """Scheme, normalised host (no IPv6 brackets) and port (defaults made explicit)."""

    scheme: str
    host: str
    port: int

    @property
    def default_port(self) -> bool:
        return self.port == DEFAULT_PORTS[self.scheme]


def url_origin(url: str) -> Origin:
    """The origin of an absolute http(s) URL; ``ValueError`` for anything else. It depends only
    on the scheme and the authority, so it is normalised once per authority (a worker asks for
    it several times per page)."""
    try:
        parts = urlsplit(url)
        origin = _origin_of(parts.scheme, parts.netloc)
    except ValueError:
        origin = None
    if origin is None:
        raise ValueError(f"not an absolute http(s) URL: {url[:200]!r}")
    return origin


@functools.lru_cache(maxsize=4096)
def _origin_of(scheme: str, netloc: str) -> Origin | None:
    normalized = normalize_http_url(f"{scheme}://{netloc}/") if scheme and netloc else None
    if normalized is None:
        return None
    parts = urlsplit(normalized)
    host = parts.hostname
    if not host:  # pragma: no cover - the normaliser only returns URLs with a host
        return None
    return Origin(parts.scheme, host, parts.port or DEFAULT_PORTS[parts.scheme])


def host_key(url: str) -> str:
    """``scheme~host~port`` of a URL's origin, usable as a Firestore document id."""
    origin = url_origin(url)
    key = _SEPARATOR.join((origin.scheme, origin.host, str(origin.port)))
    if len(key.encode("utf-8")) <= MAX_KEY_BYTES:
        return key
    digest = hashlib.sha256(origin.host.encode("utf-8")).hexdigest()
    return _SEPARATOR.join((origin.scheme, f"sha256-{digest}", str(origin.port)))


def robots_url(url: str) -> str:
    """``scheme://host[:port]/robots.txt`` for a URL's origin (non-default ports kept)."""
    origin = url_origin(url)
    host = f"[{origin.host}]" if ":" in origin.host else origin.host
    authority = host if origin.default_port else f"{host}:{origin.port}"
    return f"{origin.scheme}://{authority}/robots.txt"
