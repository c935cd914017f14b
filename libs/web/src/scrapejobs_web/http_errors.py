"""JSON error bodies for both services: {"error": {"code", "message", "field"?}}."""

from __future__ import annotations

import logging
from typing import Any

from fastapi import FastAPI, Request
from fastapi.responses import JSONResponse
from starlette.exceptions import HTTPException

log = logging.getLogger(__name__)
CODES = {
    400: "bad_request",
    401: "unauthenticated",
    403: "forbidden",
    404: "not_found",
    405: "method_not_allowed",
    409: "conflict",
}


def error_response(status: int, code: str, message: str, field: str | None = None) -> JSONResponse:
    body: dict[str, Any] = {"code": code, "message": message}
    if field is not None:
        body["field"] = field
    return JSONResponse({"error": body}, status_code=status)


async def _http(_: Request, exc: Exception) -> JSONResponse:
    assert isinstance(exc, HTTPException)
    code = CODES.get(exc.status_code, "error")
    response = error_response(exc.status_code, code, str(exc.detail))
    response.headers.update(exc.headers or {})
    return response


async def _unexpected(_: Request, exc: Exception) -> JSONResponse:
    log.exception("unhandled error", exc_info=exc)
    return error_response(500, "internal", "internal error; the request was not completed")


def install_http_error_handlers(app: FastAPI) -> None:
    app.add_exception_handler(HTTPException, _http)
    app.add_exception_handler(Exception, _unexpected)
