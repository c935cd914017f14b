"""A SERVER span per HTTP request, named ``{method} {route}`` as the OpenTelemetry HTTP
conventions say (``POST /v1/jobs``), continuing the caller's W3C trace context (Cloud Run's
front end sends one). Spans the handlers start are its children, so a submission's trace
begins at the request. A pure ASGI middleware over a tracer the composition root passes in.
"""

from __future__ import annotations

from typing import Any

from opentelemetry.trace import SpanKind, Status, StatusCode, Tracer
from opentelemetry.trace.propagation.tracecontext import TraceContextTextMapPropagator
from starlette.types import ASGIApp, Message, Receive, Scope, Send

_PROPAGATOR = TraceContextTextMapPropagator()


class RequestSpanMiddleware:
    def __init__(self, app: ASGIApp, tracer: Tracer) -> None:
        self._app = app
        self._tracer = tracer

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self._app(scope, receive, send)
            return
        method = str(scope.get("method", "GET"))
        headers = {k.decode("latin-1"): v.decode("latin-1") for k, v in scope.get("headers", [])}
        context = _PROPAGATOR.extract(headers)
        attributes = {"http.request.method": method, "url.path": str(scope.get("path", ""))}
        with self._tracer.start_as_current_span(
            method, context, kind=SpanKind.SERVER, attributes=attributes
        ) as span:
            status: dict[str, int] = {}

            async def send_status(message: Message) -> None:
                if message["type"] == "http.response.start":
                    status["code"] = int(message["status"])
                await send(message)

            try:
                await self._app(scope, receive, send_status)
            finally:
                route = _route_of(scope)
                if route:
                    span.update_name(f"{method} {route}")
                    span.set_attribute("http.route", route)
                if "code" in status:
                    span.set_attribute("http.response.status_code", status["code"])
                    if status["code"] >= 500:
                        span.set_status(Status(StatusCode.ERROR))


def _route_of(scope: Scope) -> str | None:
    route: Any = scope.get("route")
    path = getattr(route, "path_format", None) or getattr(route, "path", None)
    return path if isinstance(path, str) else None
