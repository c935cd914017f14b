"""Resolving URLs found in a page against its base URL, and normalising them for lists.

Resolution follows RFC 3986 (``urllib.parse.urljoin``) after the WHATWG clean-up of the
raw attribute: leading and trailing whitespace and C0 controls removed, tabs and newlines
removed anywhere.

Normalisation (:func:`normalize_http_url`, used by the ``links`` and ``images`` formats):
only ``http`` and ``https`` URLs are kept; scheme and host are lower-cased (non-ASCII
hosts IDNA-encoded when possible); default ports (80, 443) are removed; the fragment is
dropped; an empty path becomes ``/``; ``.`` and ``..`` segments are removed; spaces,
non-ASCII and other characters not allowed in a URL are percent-encoded as UTF-8 (existing
``%XX`` escapes are kept as they are); the query keeps its order (sorting parameters
changes meaning for some servers).
"""

from __future__ import annotations

from functools import lru_cache
from typing import Any
from urllib.parse import quote, urljoin, urlsplit, urlunsplit

_STRIP = "".join(chr(code) for code in range(0x21))
_DEFAULT_PORTS = {"http": 80, "https": 443}
_PATH_SAFE = "/%:@!$&'()*+,;=-._~"
_QUERY_SAFE = "/?%:@!$&'()*+,;=-._~"


def clean_url_attribute(raw: str) -> str:
    """An attribute value as a URL string: outer whitespace/controls off, tabs/newlines out."""
    value = raw.strip(_STRIP)
    if "\t" in value or "\n" in value or "\r" in value:
        value = value.replace("\t", "").replace("\n", "").replace("\r", "")
    return value


def resolve_url(base: str, raw: str) -> str:
    """``raw`` made absolute against ``base``; returned cleaned but unresolved if invalid."""
    value = clean_url_attribute(raw)
    if value.startswith(("https://", "http://")) and _is_plain(value):
        return value  # already absolute: what urljoin would give back
    if value.startswith("/") and not value.startswith("//") and _is_plain(value):
        origin = _origin(base)
        if origin is not None:  # a path-absolute reference replaces the base's path
            return origin + value
    try:
        return urljoin(base, value)
    except ValueError:  # e.g. an invalid IPv6 host in the reference
        return value


def _is_plain(value: str) -> bool:
    """No dot segments or backslashes that would make resolution more than a join."""
    return "/." not in value and "\\" not in value


@lru_cache(maxsize=64)
def _origin(base: str) -> str | None:
    """``scheme://authority`` of an absolute http(s) base URL, else ``None``."""
    try:
        parts = urlsplit(base)
    except ValueError:
        return None
    if parts.scheme.lower() not in _DEFAULT_PORTS or not parts.netloc:
        return None
    return f"{parts.scheme}://{parts.netloc}"


def normalize_http_url(url: str) -> str | None:
    """The normalised form of an absolute http(s) URL, ``None`` for anything else."""
    try:
        parts = urlsplit(url)
        scheme = parts.scheme.lower()
        if scheme not in _DEFAULT_PORTS:
            return None
        host = parts.hostname
        port = parts.port
    except ValueError:
        return None
    if not host:
        return None
    netloc = _netloc(scheme, host, port, parts.username, parts.password)
    path = quote(_remove_dot_segments(parts.path), safe=_PATH_SAFE) or "/"
    query = quote(parts.query, safe=_QUERY_SAFE)
    return urlunsplit((scheme, netloc, path, query, ""))


def _netloc(
    scheme: str, host: str, port: int | None, user: str | None, password: str | None
) -> str:
    if ":" in host:
        host = f"[{host}]"
    elif not host.isascii():
        try:
            host = host.encode("idna").decode("ascii")
        except UnicodeError:
            host = quote(host, safe="")
    netloc = host if port is None or port == _DEFAULT_PORTS[scheme] else f"{host}:{port}"
    if user is not None:
        userinfo = user if password is None else f"{user}:{password}"
        netloc = f"{userinfo}@{netloc}"
    return netloc


def _remove_dot_segments(path: str) -> str:
    if "." not in path:
        return path
    output: list[str] = []
    segments = path.split("/")
    for index, segment in enumerate(segments):
        last = index == len(segments) - 1
        if segment == ".":
            if last:
                output.append("")
        elif segment == "..":
            if len(output) > 1:
                output.pop()
            if last:
                output.append("")
        else:
            output.append(segment)
    return "/".join(output)


def document_base_url(root: Any, final_url: str) -> str:
    """The URL relative references in a document resolve against.

    Per the HTML standard the first ``<base href>`` wins, itself resolved against the
    document's URL (the final URL after redirects); a base that is not http(s) is ignored.
    """
    for element in root.iter("base"):  # in C, stopping at the first (an XPath reads all)
        href = element.get("href")
        if href is not None:
            base = resolve_url(final_url, href)
            return base if urlsplit(base).scheme.lower() in _DEFAULT_PORTS else final_url
    return final_url
