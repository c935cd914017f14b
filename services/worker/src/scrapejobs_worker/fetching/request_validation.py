"""Validation of the caller's URL and headers before anything touches the network."""

from __future__ import annotations

import re
from collections.abc import Mapping

import httpx

from scrapejobs_shared.extraction.field_types import FORBIDDEN_HEADERS
from scrapejobs_shared.ports.fetcher import PermanentFetchError

ALLOWED_SCHEMES = frozenset({"http", "https"})

_TOKEN = re.compile(r"[!#$%&'*+\-.^_`|~0-9A-Za-z]+")
_BAD_VALUE_CHARS = re.compile(r"[\x00-\x08\x0a-\x1f\x7f]")


def parse_target_url(raw: str | httpx.URL) -> httpx.URL:
    """Parse and vet a URL: http(s) only, a host, no userinfo, a valid port."""
    try:
        url = raw if isinstance(raw, httpx.URL) else httpx.URL(raw)
    except (httpx.InvalidURL, TypeError, ValueError) as exc:
        raise _invalid(f"malformed URL: {exc}") from exc
    if url.scheme not in ALLOWED_SCHEMES:
        raise _invalid(f"scheme {url.scheme!r} is not allowed")
    if not url.raw_host:
        raise _invalid("URL has no host")
    if url.userinfo:
        raise _invalid("credentials in the URL are not allowed")
    if b"%" in url.raw_host:
        raise _invalid("scoped IPv6 addresses are not allowed")
    if not 0 < effective_port(url) < 65536:
        raise _invalid(f"port {url.port} is out of range")
    return url


def effective_port(url: httpx.URL) -> int:
    if url.port is not None:
        return url.port
    return 443 if url.scheme == "https" else 80


def validate_headers(headers: Mapping[str, str]) -> dict[str, str]:
    """Return the caller's headers if none is forbidden or malformed."""
    for name, value in headers.items():
        if name.lower() in FORBIDDEN_HEADERS:
            raise PermanentFetchError(f"header {name!r} is not allowed", reason="forbidden_header")
        if not _TOKEN.fullmatch(name) or _BAD_VALUE_CHARS.search(value):
            raise PermanentFetchError(f"header {name!r} is malformed", reason="invalid_header")
    return dict(headers)


def _invalid(detail: str) -> PermanentFetchError:
    return PermanentFetchError(detail, reason="invalid_url")
