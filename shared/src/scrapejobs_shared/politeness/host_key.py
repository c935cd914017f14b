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
import re
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


def origin_url(key: str) -> str:
    """A host key as the origin a person reads: ``https://example.com``,
    ``http://[::1]:8080`` (the port only when it is not the scheme's default); the key itself
    when it is not one."""
    scheme, sep, rest = key.partition(_SEPARATOR)
    host, sep2, port = rest.rpartition(_SEPARATOR)
    if not (sep and sep2 and host and port.isdigit() and scheme in DEFAULT_PORTS):
        return key
    if ":" in host:
        host = f"[{host}]"
    default = int(port) == DEFAULT_PORTS[scheme]
    return f"{scheme}://{host}" if default else f"{scheme}://{host}:{port}"


# A host named as a URL on it, or as its key: what ``key_of`` accepts (IPv6 hosts as keys only;
# a host name is at most 253 characters).
HOST_PATTERN = (  # no \s: Python's and Rust's (pydantic's) differ on \x1c-\x1f
    r"^(?:[hH][tT][tT][pP][sS]?://[^\x00-\x20\x7f/?#@:\[\]\\]{1,253}(:[0-9]{1,5})?"
    r"([/?#][^\x00-\x20\x7f]*)?"
    r"|https?~[^\x00-\x20\x7f/?#@\[\]\\~]{1,253}~[0-9]{1,5})$"
)
_HOST = re.compile(HOST_PATTERN)


def key_of(host: str) -> str:
    """The key of a host given as a URL (``https://example.com:8443``, any path) or as a key
    (``https~example.com~8443``); ``ValueError`` unless it matches ``HOST_PATTERN``. A host
    that matches but cannot be normalised (no task can have it) gets a key no task has."""
    if not _HOST.match(host):
        raise ValueError("not an http(s) URL or a host key (scheme~host~port)")
    try:
        return host_key(host if "://" in host else origin_url(host))
    except ValueError:
        return f"unknown~sha256-{hashlib.sha256(host.encode('utf-8', 'replace')).hexdigest()}"


def robots_url(url: str) -> str:
    """``scheme://host[:port]/robots.txt`` for a URL's origin (non-default ports kept)."""
    origin = url_origin(url)
    host = f"[{origin.host}]" if ":" in origin.host else origin.host
    authority = host if origin.default_port else f"{host}:{origin.port}"
    return f"{origin.scheme}://{authority}/robots.txt"
