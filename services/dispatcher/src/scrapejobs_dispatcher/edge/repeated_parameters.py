"""Refuse a query parameter (or an ``Idempotency-Key`` header) given more than once: a 422 that
names it. Every parameter of the API takes one value; the framework would quietly act on the
last of several (``?tenant=x&tenant=y`` submitted for ``y``), a value the caller may not have
meant and the OpenAPI document does not describe."""

from __future__ import annotations

import json
from collections import Counter
from urllib.parse import parse_qsl

from starlette.types import ASGIApp, Receive, Scope, Send

SINGLE_HEADERS = (b"idempotency-key",)


class RepeatedParametersMiddleware:
    def __init__(self, app: ASGIApp) -> None:
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] == "http":
            repeated = repeated_parameter(scope)
            if repeated is not None:
                await _refuse(send, repeated)
                return
        await self.app(scope, receive, send)


def repeated_parameter(scope: Scope) -> str | None:
    """The first query parameter or single-value header the request repeats, if any."""
    query = bytes(scope.get("query_string") or b"").decode("latin-1")
    names: Counter[str] = Counter(name for name, _ in parse_qsl(query, keep_blank_values=True))
    given = (bytes(name).lower() for name, _ in scope.get("headers") or [])
    headers: Counter[bytes] = Counter(name for name in given if name in SINGLE_HEADERS)
    repeated = [name for name, n in names.items() if n > 1]
    repeated += [name.decode() for name, n in headers.items() if n > 1]
    return repeated[0] if repeated else None


async def _refuse(send: Send, name: str) -> None:
    message = f"{name!r} is given more than once: it takes one value"
    error = {"code": "invalid_request", "message": message, "field": name}
    body = json.dumps({"error": error}).encode()
    headers = [(b"content-type", b"application/json"), (b"content-length", str(len(body)).encode())]
    await send({"type": "http.response.start", "status": 422, "headers": headers})
    await send({"type": "http.response.body", "body": body})
