"""OpenTelemetry: a tracer per service and W3C trace context carried in message attributes."""

from __future__ import annotations

from collections.abc import Mapping

from opentelemetry import context as otel_context
from opentelemetry.sdk.resources import Resource
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor, SpanExporter
from opentelemetry.trace import Tracer
from opentelemetry.trace.propagation.tracecontext import TraceContextTextMapPropagator

_PROPAGATOR = TraceContextTextMapPropagator()


def build_tracer(service_name: str, exporter: SpanExporter | None = None) -> Tracer:
    """A tracer from a provider owned by the caller (no global provider is installed)."""
    provider = TracerProvider(resource=Resource.create({"service.name": service_name}))
    if exporter is not None:
        provider.add_span_processor(SimpleSpanProcessor(exporter))
    return provider.get_tracer(service_name)


def inject_trace_context() -> dict[str, str]:
    """The current span's W3C headers (``traceparent``, ``tracestate``) for message attributes."""
    carrier: dict[str, str] = {}
    _PROPAGATOR.inject(carrier)
    return carrier


def extract_trace_context(attributes: Mapping[str, str]) -> otel_context.Context:
    return _PROPAGATOR.extract(dict(attributes))
