"""W3C trace context carried in message attributes (providers: ``telemetry.py``)."""

from __future__ import annotations

from collections.abc import Mapping

from opentelemetry import context as otel_context
from opentelemetry.trace.propagation.tracecontext import TraceContextTextMapPropagator

_PROPAGATOR = TraceContextTextMapPropagator()


def inject_trace_context() -> dict[str, str]:
    """The current span's W3C headers (``traceparent``, ``tracestate``) for message attributes."""
    carrier: dict[str, str] = {}
    _PROPAGATOR.inject(carrier)
    return carrier


def extract_trace_context(attributes: Mapping[str, str]) -> otel_context.Context:
    return _PROPAGATOR.extract(dict(attributes))
