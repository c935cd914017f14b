"""Refuse a caller without credentials before its request body is read.

FastAPI reads and parses a JSON body before any dependency runs, so a route's own
authentication comes after the parse: an unauthenticated ``[[],[],...]`` of a few MB costs
tens of MB of memory. This middleware sits in front of the application and answers ``401``
(native shape on /v1, Firecrawl's on /v2) from the headers alone, for every /v1 and /v2
path; the body is never read. An authenticated request goes on to the body limit
(:mod:`.body_limit`) and the routes, whose dependency checks again.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping

from starlette.requests import HTTPConnection
from starlette.responses import Response
from starlette.types import ASGIApp, Receive, Scope, Send

from scrapejobs_dispatcher.tenants.authentication import CALLER_STATE, Authenticator, Refused
from scrapejobs_web.http_errors import CODES, error_response

NATIVE_PREFIX = "/v1/"


class CredentialsFirstMiddleware:
    """``reshapes``: the other API surfaces guarded, each by its path prefix, with how its
    answers are shaped (Firecrawl's ``/v2/``: ``firecrawl/errors.py``)."""

    def __init__(
        self,
        app: ASGIApp,
        authenticator: Authenticator,
        reshapes: Mapping[str, Callable[[Response], Response]],
    ) -> None:
        self.app = app
        self.authenticator = authenticator
        self.reshapes = dict(reshapes)
        self.prefixes = (NATIVE_PREFIX, *self.reshapes)

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        path = str(scope["path"]) if scope["type"] == "http" else ""
        if path.startswith(self.prefixes):
            try:
                caller = await self.authenticator.identify(HTTPConnection(scope))
            except Refused as refused:
                response: Response = error_response(
                    refused.status, CODES[refused.status], refused.reason
                )
                for prefix, reshape in self.reshapes.items():
                    if path.startswith(prefix):
                        response = reshape(response)
                await response(scope, receive, send)
                return
            scope.setdefault("state", {})[CALLER_STATE] = caller  # the routes' dependency reads it
        await self.app(scope, receive, send)
