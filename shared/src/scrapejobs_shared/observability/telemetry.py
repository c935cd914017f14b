"""Where spans and metrics go: one ``Telemetry`` per process, built by a composition root from
``SCRAPEJOBS_TELEMETRY_EXPORTER`` and passed down (no global provider is installed).

* ``none`` (default, local development): spans are not recorded (``ALWAYS_OFF``; trace
  context still travels in message attributes and logs still carry trace ids) and the meter
  provider is the API's no-op one, so instruments cost nothing (recording every span costs a
  worker CPU on every page: bench/README.md, "Tracing").
* ``console``: spans and metrics printed to stdout (metrics every ``metric_interval_s``).
* ``otlp``: OTLP over HTTP/protobuf to ``OTEL_EXPORTER_OTLP_ENDPOINT`` (default
  ``http://localhost:4318``), the standard ``OTEL_EXPORTER_OTLP_*`` variables apply.
* ``gcp``: spans to Cloud Trace, metrics to Cloud Monitoring (``workload.googleapis.com/…``),
  with the Cloud Run resource detected from the metadata server.

Recorded traces can be thinned with ``trace_ratio`` (``SCRAPEJOBS_TELEMETRY_TRACE_RATIO``): the
decision is a function of the trace id, so both services keep or drop the same traces whole.

``shutdown()`` flushes batched spans and the last metrics; composition roots call it when the
app stops.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from enum import StrEnum

from opentelemetry.metrics import Meter, MeterProvider, NoOpMeterProvider
from opentelemetry.sdk.metrics import MeterProvider as SdkMeterProvider
from opentelemetry.sdk.metrics.export import (
    ConsoleMetricExporter,
    MetricExporter,
    MetricReader,
    PeriodicExportingMetricReader,
)
from opentelemetry.sdk.resources import Resource
from opentelemetry.sdk.trace import SpanProcessor, TracerProvider
from opentelemetry.sdk.trace.export import BatchSpanProcessor, ConsoleSpanExporter, SpanExporter
from opentelemetry.sdk.trace.sampling import ALWAYS_OFF, Sampler, TraceIdRatioBased
from opentelemetry.trace import Tracer

from scrapejobs_shared.config.settings import CommonSettings

DEFAULT_METRIC_INTERVAL_S = 60.0  # Cloud Monitoring accepts one point per series per 5 s at most


class TelemetryExporter(StrEnum):
    NONE = "none"
    CONSOLE = "console"
    OTLP = "otlp"
    GCP = "gcp"


@dataclass(frozen=True, slots=True)
class Telemetry:
    """A process's tracer provider and meter provider."""

    tracer_provider: TracerProvider
    meter_provider: MeterProvider

    def tracer(self, name: str) -> Tracer:
        return self.tracer_provider.get_tracer(name)

    def meter(self, name: str) -> Meter:
        return self.meter_provider.get_meter(name)

    def shutdown(self) -> None:
        """Flush what is batched (spans, the last metric interval) and stop the exporters."""
        self.tracer_provider.shutdown()
        if isinstance(self.meter_provider, SdkMeterProvider):
            self.meter_provider.shutdown()


def build_telemetry(
    service_name: str,
    exporter: TelemetryExporter | str = TelemetryExporter.NONE,
    *,
    metric_interval_s: float = DEFAULT_METRIC_INTERVAL_S,
    trace_ratio: float = 1.0,
) -> Telemetry:
    """The telemetry a deployment asked for (``SCRAPEJOBS_TELEMETRY_EXPORTER``)."""
    kind = TelemetryExporter(exporter)
    if kind is TelemetryExporter.NONE:
        return telemetry_with(service_name)
    resource = _resource(service_name, kind)
    spans, metrics = _exporters(kind)
    reader = PeriodicExportingMetricReader(metrics, export_interval_millis=metric_interval_s * 1000)
    return telemetry_with(
        service_name,
        span_processors=[BatchSpanProcessor(spans)],
        metric_readers=[reader],
        resource=resource,
        trace_ratio=trace_ratio,
    )


def telemetry_with(
    service_name: str,
    *,
    span_processors: Sequence[SpanProcessor] = (),
    metric_readers: Sequence[MetricReader] = (),
    resource: Resource | None = None,
    trace_ratio: float = 1.0,
) -> Telemetry:
    """Telemetry over given processors and readers (tests pass in-memory ones). Without a span
    processor spans are not recorded; without a metric reader the meter provider is a no-op."""
    resource = resource or Resource.create({"service.name": service_name})
    sampler: Sampler = TraceIdRatioBased(trace_ratio) if span_processors else ALWAYS_OFF
    tracer_provider = TracerProvider(resource=resource, sampler=sampler)
    for processor in span_processors:
        tracer_provider.add_span_processor(processor)
    meter_provider: MeterProvider = (
        SdkMeterProvider(resource=resource, metric_readers=list(metric_readers))
        if metric_readers
        else NoOpMeterProvider()
    )
    return Telemetry(tracer_provider, meter_provider)


def _resource(service_name: str, kind: TelemetryExporter) -> Resource:
    resource = Resource.create({"service.name": service_name})
    if kind is TelemetryExporter.GCP:
        from opentelemetry.resourcedetector.gcp_resource_detector import (
            GoogleCloudResourceDetector,
        )

        resource = GoogleCloudResourceDetector(raise_on_error=False).detect().merge(resource)
    return resource


def _exporters(kind: TelemetryExporter) -> tuple[SpanExporter, MetricExporter]:
    """The exporters of a kind; the cloud ones are imported only when chosen."""
    if kind is TelemetryExporter.CONSOLE:
        return ConsoleSpanExporter(), ConsoleMetricExporter()
    if kind is TelemetryExporter.OTLP:
        from opentelemetry.exporter.otlp.proto.http.metric_exporter import OTLPMetricExporter
        from opentelemetry.exporter.otlp.proto.http.trace_exporter import OTLPSpanExporter

        return OTLPSpanExporter(), OTLPMetricExporter()
    from opentelemetry.exporter.cloud_monitoring import CloudMonitoringMetricsExporter
    from opentelemetry.exporter.cloud_trace import CloudTraceSpanExporter

    # Every Cloud Run instance writes its own series (a unique label): two instances writing
    # one series within Cloud Monitoring's 5 s minimum would have their points refused.
    spans = CloudTraceSpanExporter()  # type: ignore[no-untyped-call]
    return spans, CloudMonitoringMetricsExporter(add_unique_identifier=True)


def telemetry_for(service_name: str, settings: CommonSettings) -> Telemetry:
    """The telemetry a service's settings ask for (``SCRAPEJOBS_TELEMETRY_*``)."""
    return build_telemetry(
        service_name,
        settings.telemetry_exporter,
        metric_interval_s=settings.telemetry_metric_interval_s,
        trace_ratio=settings.telemetry_trace_ratio,
    )
