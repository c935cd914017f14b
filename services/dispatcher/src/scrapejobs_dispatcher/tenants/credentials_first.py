"""Refuse a caller without credentials before its request body is read.

FastAPI reads and parses a JSON body before any dependency runs, so a route's own
authentication comes after the parse: an unauthenticated ``[[],[],...]`` of a few MB costs
tens of MB of memory. This middleware sits in front of the application and answers ``401``
(native shape on /v1, Firecrawl's on /v2) from the headers alone, for every /v1 and /v2
path; the body is never read. An authenticated request goes on to the body limit
(:mod:`.body_limit`) and the routes, whose dependency checks again.
"""

from __future__ import annotations

from starlette.requests import HTTPConnection
from starlette.types import ASGIApp, Receive, Scope, Send

from scrapejobs_dispatcher.firecrawl.errors import PREFIX as FIRECRAWL_PREFIX
from scrapejobs_dispatcher.firecrawl.errors import reshape
from scrapejobs_dispatcher.tenants.authentication import CALLER_STATE, Authenticator, Refused
from scrapejobs_web.http_errors import CODES, error_response

GUARDED_PREFIXES = ("/v1/", FIRECRAWL_PREFIX)


class CredentialsFirstMiddleware:
    def __init__(self, app: ASGIApp, authenticator: Authenticator) -> None:
        self.app = app
        self.authenticator = authenticator

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] == "http" and str(scope["path"]).startswith(GUARDED_PREFIXES):
            try:
                caller = await self.authenticator.identify(HTTPConnection(scope))
            except Refused as refused:
                response = error_response(refused.status, CODES[refused.status], refused.reason)
                if str(scope["path"]).startswith(FIRECRAWL_PREFIX):
                    response = reshape(response)
                await response(scope, receive, send)
                return
            scope.setdefault("state", {})[CALLER_STATE] = caller  # the routes' dependency reads it
        await self.app(scope, receive, send)
