"""JSON error bodies for both services: {"error": {"code", "message", "field"?}}."""

from __future__ import annotations

import logging
import math
import re
from typing import Any

from fastapi import FastAPI, Request
from fastapi.responses import JSONResponse
from starlette.exceptions import HTTPException

log = logging.getLogger(__name__)
HTTP_METHODS = frozenset({"get", "put", "post", "delete", "options", "head", "patch", "trace"})
CODES = {
    400: "bad_request",
    401: "unauthenticated",
    403: "forbidden",
    404: "not_found",
    405: "method_not_allowed",
    409: "conflict",
}


def error_response(
    status: int, code: str, message: str, field: str | None = None, **extra: Any
) -> JSONResponse:
    body: dict[str, Any] = {"code": code, "message": message}
    if field is not None:
        body["field"] = field
    return JSONResponse({"error": body | extra}, status_code=status)


def unavailable_response(
    dependency: str, message: str, retry_after_s: float, **extra: Any
) -> JSONResponse:
    """``503`` naming the dependency that did not answer, with ``Retry-After`` (whole seconds,
    at least 1): ``{"error": {"code": "dependency_unavailable", "message", "dependency"}}``."""
    response = error_response(
        503, "dependency_unavailable", message, dependency=dependency, **extra
    )
    response.headers["Retry-After"] = str(max(1, math.ceil(retry_after_s)))
    return response


async def _http(request: Request, exc: Exception) -> JSONResponse:
    assert isinstance(exc, HTTPException)
    code = CODES.get(exc.status_code, "error")
    response = error_response(exc.status_code, code, str(exc.detail))
    response.headers.update(exc.headers or {})
    if exc.status_code == 405:  # Starlette names only the first matching route's methods
        response.headers["Allow"] = ", ".join(_allowed_methods(request))
    return response


def _allowed_methods(request: Request) -> list[str]:
    """Every method the OpenAPI document lists for the requested path, matching each path
    parameter by its documented ``pattern`` (a job id has no ``:``, so ``/v1/jobs/x:cancel``
    is only the cancel resource)."""
    methods: set[str] = set()
    for template, operations in request.app.openapi().get("paths", {}).items():
        if _template_regex(template, operations).fullmatch(request.url.path):
            methods |= {method.upper() for method in operations if method in HTTP_METHODS}
    return sorted(methods)


def _template_regex(template: str, operations: dict[str, Any]) -> re.Pattern[str]:
    patterns: dict[str, str] = {}
    for operation in operations.values():
        for parameter in operation.get("parameters", []) if isinstance(operation, dict) else []:
            pattern = parameter.get("schema", {}).get("pattern")
            if parameter.get("in") == "path" and pattern:
                patterns[parameter["name"]] = pattern.removeprefix("^").removesuffix("$")
    parts = re.split(r"\{([^}]+)\}", template)  # literal, name, literal, name, ...
    regex = "".join(
        re.escape(part) if index % 2 == 0 else f"(?:{patterns.get(part, '[^/]+')})"
        for index, part in enumerate(parts)
    )
    return re.compile(regex)


async def _unexpected(_: Request, exc: Exception) -> JSONResponse:
    log.exception("unhandled error", exc_info=exc)
    return error_response(500, "internal", "internal error; the request was not completed")


def install_http_error_handlers(app: FastAPI) -> None:
    app.add_exception_handler(HTTPException, _http)
    app.add_exception_handler(Exception, _unexpected)
