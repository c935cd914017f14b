"""Refuse a JSON body holding text that is not valid Unicode, naming the field.

JSON lets a string escape a lone UTF-16 surrogate (``"\\ud9b1"``); Python decodes it into a
``str`` that cannot be encoded as UTF-8, so nothing can store, hash, send or even log it. A
request holding one anywhere (a value or a key) is refused before its model is validated: a
``422`` naming the field on /v1 (a ``400`` in Firecrawl's shape on /v2), so nothing that
passed submit can fail later on it. Bodies without a surrogate escape cost one scan of the
raw bytes.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Coroutine
from typing import Any

from fastapi import Request, Response
from fastapi.exceptions import RequestValidationError
from fastapi.routing import APIRoute

_SURROGATE_ESCAPE = re.compile(rb"\\u[dD][89a-fA-F][0-9a-fA-F]{2}")
BODY_METHODS = frozenset({"POST", "PUT", "PATCH"})
MESSAGE = "not valid Unicode text (it holds a lone surrogate, \\ud800-\\udfff)"


class UnicodeBodyRoute(APIRoute):
    """A route that refuses a body holding text that is not valid Unicode."""

    def get_route_handler(self) -> Callable[[Request], Coroutine[Any, Any, Response]]:
        handler = super().get_route_handler()

        async def checked(request: Request) -> Response:
            # a multipart upload (uploads/multipart_upload.py) checks its JSON field itself:
            # its file is not read whole before its size is checked
            multipart = request.headers.get("content-type", "").startswith("multipart/")
            if request.method in BODY_METHODS and not multipart:
                where = unencodable_field(await request.body())
                if where is not None:
                    error = {"type": "unicode", "loc": ("body", *where), "msg": MESSAGE}
                    raise RequestValidationError([error])
            return await handler(request)

        return checked


def unencodable_field(body: bytes) -> tuple[str | int, ...] | None:
    """Where in a JSON body the first string that is not valid Unicode is (keys shown with
    their surrogates escaped); None when there is none or the body is not JSON."""
    if not _SURROGATE_ESCAPE.search(body):
        return None
    try:
        parsed = json.loads(body)
    except ValueError:
        return None  # the route's own parse says what is wrong
    return _first_unencodable(parsed, ())


def _first_unencodable(value: Any, path: tuple[str | int, ...]) -> tuple[str | int, ...] | None:
    if isinstance(value, str):
        return None if _encodable(value) else path
    if isinstance(value, dict):
        for key, item in value.items():
            if not _encodable(key):
                return (*path, key.encode("utf-8", "backslashreplace").decode())
            found = _first_unencodable(item, (*path, key))
            if found is not None:
                return found
    elif isinstance(value, list):
        for index, item in enumerate(value):
            found = _first_unencodable(item, (*path, index))
            if found is not None:
                return found
    return None


def _encodable(text: str) -> bool:
    try:
        text.encode()
    except UnicodeEncodeError:
        return False
    return True
