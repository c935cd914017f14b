"""Opaque page tokens: URL-safe base64 of a small JSON list of cursor values."""

from __future__ import annotations

import base64
import binascii
import json

from scrapejobs_shared.errors import InvalidInput


class InvalidPageToken(InvalidInput):
    status = 400
    code = "invalid_page_token"
    field = "page_token"


def encode_token(values: list[str]) -> str:
    return base64.urlsafe_b64encode(json.dumps(values).encode()).decode().rstrip("=")


def decode_token(token: str, size: int) -> list[str]:
    try:
        raw = base64.urlsafe_b64decode(token + "=" * (-len(token) % 4))
        values = json.loads(raw)
    except (binascii.Error, ValueError):
        raise InvalidPageToken("page_token is not valid") from None
    if (
        not isinstance(values, list)
        or len(values) != size
        or not all(isinstance(v, str) for v in values)
    ):
        raise InvalidPageToken("page_token is not valid")
    return values
