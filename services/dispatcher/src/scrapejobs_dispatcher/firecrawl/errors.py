"""Firecrawl's error shape for every /v2 failure: ``{"success": false, "error": "<message>",
"code", "field"?}``, with ``400`` for bad input (where the native API says ``422``).

The message, status and headers are the native API's (errors.py, one place for what each
failure says); ``FirecrawlRoute`` reshapes them for the routes of the /v2 router, and
``reshape`` does it for a /v2 path the router never reached (no such route, a bad method).
"""

from __future__ import annotations

import json
from collections.abc import Callable, Coroutine
from typing import Any

from fastapi import APIRouter, Depends, FastAPI, Request, Response
from fastapi.responses import JSONResponse
from pydantic import BaseModel, Field
from starlette.exceptions import HTTPException

from scrapejobs_dispatcher.edge.unicode_body import UnicodeBodyRoute
from scrapejobs_dispatcher.tenants.authentication import require_caller

PREFIX = "/v2/"
KEPT_HEADERS = ("retry-after", "allow", "location")


class FirecrawlError(BaseModel):
    """What every /v2 failure answers."""

    success: bool = Field(default=False, description="Always false")
    error: str = Field(description="What went wrong")
    code: str | None = Field(default=None, description="The native error code")
    field: str | None = Field(default=None, description="The request field at fault")


ERRORS: dict[int | str, dict[str, Any]] = {
    code: {"model": FirecrawlError} for code in (400, 401, 403, 404, 408, 409, 500, 503)
}


class FirecrawlRoute(UnicodeBodyRoute):
    """A route whose failures answer in Firecrawl's shape (a body that is not valid Unicode
    included)."""

    def get_route_handler(self) -> Callable[[Request], Coroutine[Any, Any, Response]]:
        handler = super().get_route_handler()

        async def firecrawl_handler(request: Request) -> Response:
            try:
                return await handler(request)
            except Exception as exc:  # every failure: the native handler says what it is
                return reshape(await native_response(request, exc))

        return firecrawl_handler


def v2_router(prefix: str = "/v2") -> APIRouter:
    """A /v2 router (or v1's, for the one Firecrawl v1 route served: ``/v1/search``): its
    routes answer failures in Firecrawl's shape, behind the caller check."""
    return APIRouter(
        prefix=prefix,
        tags=["firecrawl"],
        route_class=FirecrawlRoute,
        dependencies=[Depends(require_caller)],
        responses=ERRORS,
    )


async def native_response(request: Request, exc: Exception) -> Response:
    """What the app's own handler for ``exc`` answers (its most specific one)."""
    handlers = request.app.exception_handlers
    for kind in type(exc).__mro__:
        handler = handlers.get(kind)
        if handler is not None:
            response: Response = await handler(request, exc)
            return response
    raise exc  # pragma: no cover - Exception always has a handler (install_http_error_handlers)


def reshape(native: Response) -> JSONResponse:
    """A native error response in Firecrawl's shape (422 becomes 400)."""
    try:
        body = json.loads(bytes(native.body))
    except ValueError:
        body = {}
    headers = {k: v for k, v in native.headers.items() if k.lower() in KEPT_HEADERS}
    if isinstance(body, dict) and body.get("success") is False:  # already Firecrawl's
        return JSONResponse(body, status_code=native.status_code, headers=headers)
    error = body.get("error") if isinstance(body, dict) else None
    error = error if isinstance(error, dict) else {}
    content: dict[str, Any] = {
        "success": False,
        "error": str(error.get("message") or "request failed"),
        "code": error.get("code"),
    }
    content |= {k: v for k, v in error.items() if k not in ("message", "code")}
    status = 400 if native.status_code == 422 else native.status_code
    return JSONResponse(content, status_code=status, headers=headers)


def install(app: FastAPI) -> None:
    """Answer in Firecrawl's shape on /v2 paths the router never reached (no such route, a
    method it does not serve): wraps the app's HTTP error handler (install it after it)."""
    native_http = app.exception_handlers[HTTPException]

    async def http_error(request: Request, exc: Exception) -> Response:
        response = native_http(request, exc)
        if not isinstance(response, Response):
            response = await response
        return reshape(response) if request.url.path.startswith(PREFIX) else response

    app.add_exception_handler(HTTPException, http_error)
