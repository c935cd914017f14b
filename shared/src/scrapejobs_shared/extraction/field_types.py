"""The field types of a submission: URLs, strict JSON integers, labels, request headers (what
they accept, and what the OpenAPI document says of them)."""

from __future__ import annotations

import re
from typing import Annotated, Any
from urllib.parse import urlsplit

from pydantic import (
    AfterValidator,
    BeforeValidator,
    StringConstraints,
    WithJsonSchema,
)
from pydantic.config import JsonDict

MAX_URLS = 10_000  # URLs of one job, and pages of one crawl
MAX_URL_LENGTH = 2048
# Headers a job may not set: they could address the metadata server, smuggle requests, or
# defeat the fetcher's own body decoding and limits (refused at submit and again at fetch).


FORBIDDEN_HEADERS = frozenset(
    {
        "host",
        "metadata-flavor",
        "x-google-metadata-request",
        "content-length",
        "transfer-encoding",
        "connection",
        "keep-alive",
        "proxy-connection",
        "proxy-authorization",
        "te",
        "trailer",
        "upgrade",
        "expect",
        "accept-encoding",
    }
)


def check_url(url: str) -> str:
    """An absolute http(s) URL with a host and no credentials."""
    if len(url) > MAX_URL_LENGTH:
        raise ValueError(f"URL longer than {MAX_URL_LENGTH} characters")
    parts = urlsplit(url)
    if parts.scheme not in ("http", "https"):
        raise ValueError(f"URL scheme must be http or https, got {parts.scheme or 'none'!r}")
    if not parts.hostname:
        raise ValueError("URL has no host")
    if parts.username is not None or parts.password is not None:
        raise ValueError("URL must not contain credentials")
    try:
        parts.port  # noqa: B018 - raises on an invalid port
    except ValueError as exc:
        raise ValueError(f"invalid port: {exc}") from None
    return url


def is_task_url(url: str) -> bool:
    """Whether ``url`` is one a task can be made of (``check_url`` accepts it)."""
    try:
        check_url(url)
    except ValueError:
        return False
    return True


# What check_url accepts, for the OpenAPI document (a subset of it: IPv6 literals and ports
# above 9999 are accepted too).


URL_SCHEMA = {
    "type": "string",
    "minLength": 8,
    "maxLength": MAX_URL_LENGTH,
    "pattern": r"^[hH][tT][tT][pP][sS]?://[^\s/?#@:\[\]\\]+(:[0-9]{1,4})?([/?#][^\s]*)?$",
    "description": "An absolute http(s) URL with a host and no credentials",
}


HttpUrl = Annotated[str, AfterValidator(check_url), WithJsonSchema(URL_SCHEMA)]


def _integral(value: Any) -> Any:
    """JSON has one number type: 6.0 is the integer 6 (as JSON Schema says), "6" is not."""
    if isinstance(value, float) and value.is_integer():
        return int(value)
    return value


JSON_INT = BeforeValidator(_integral)  # after the bounds in Annotated[int, Field(...), JSON_INT]
# Firestore refuses map keys of the form __name__ (the job's spec and labels are maps), so no
# key a user names (a label, a header, an extracted field) may start with two underscores.


RESERVED_PREFIX = "__"


def not_reserved(key: str) -> str:
    if key.startswith(RESERVED_PREFIX):
        raise ValueError(f"{key[:64]!r}: names starting with '{RESERVED_PREFIX}' are reserved")
    return key


LabelKey = Annotated[
    str, StringConstraints(min_length=1, max_length=63), AfterValidator(not_reserved)
]


LabelValue = Annotated[str, StringConstraints(max_length=256)]


LABEL_KEYS: JsonDict = {
    "propertyNames": {"minLength": 1, "maxLength": 63, "pattern": f"^(?!{RESERVED_PREFIX})"}
}


HEADER_NAME = re.compile(r"^[!#$%&'*+.^_`|~0-9A-Za-z-]+$")
# RFC 9110 field values as HTTP clients send them: visible ASCII, spaces and tabs; no control
# character (a NUL, an ESC, a line break) and nothing outside ASCII (httpx refuses to send it)
HEADER_VALUE = re.compile(r"^[\t\x20-\x7e]*$")


def headers_schema(forbidden: frozenset[str]) -> JsonDict:
    """What ``check_headers`` accepts, for the OpenAPI document: RFC 9110 token names, none of
    ``forbidden`` (in any case) nor reserved, values of visible ASCII, spaces and tabs."""
    any_case = "|".join(
        "".join(f"[{c.lower()}{c.upper()}]" if c.isalpha() else c for c in name)
        for name in sorted(forbidden)
    )
    return {
        "propertyNames": {
            "pattern": HEADER_NAME.pattern,
            "not": {"pattern": f"^(?:{any_case}|{RESERVED_PREFIX}.*)$"},
        },
        "additionalProperties": {"type": "string", "pattern": HEADER_VALUE.pattern},
    }


def check_headers(value: dict[str, str], forbidden: frozenset[str]) -> dict[str, str]:
    for name, header_value in value.items():
        if name.lower() in forbidden:
            raise ValueError(f"header {name!r} may not be set")
        if not HEADER_NAME.match(name):
            raise ValueError(f"invalid header name {name!r}")
        if not HEADER_VALUE.match(header_value):
            raise ValueError(
                f"invalid header {name!r}: its value may hold only visible ASCII, spaces and "
                "tabs (no control characters)"
            )
        not_reserved(name)
    return value
