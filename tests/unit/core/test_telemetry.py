"""Telemetry built from SCRAPEJOBS_TELEMETRY_EXPORTER: off by default (nothing recorded,
no-op meters, trace context still made), and each exporter kind builds its providers."""

from __future__ import annotations

import pytest
from opentelemetry.metrics import NoOpMeterProvider
from opentelemetry.sdk.metrics import MeterProvider as SdkMeterProvider

from scrapejobs_shared.config.settings import CommonSettings
from scrapejobs_shared.observability.telemetry import build_telemetry, telemetry_for
from scrapejobs_shared.observability.tracing import inject_trace_context


def test_the_default_records_nothing_but_context_still_travels() -> None:
    settings = CommonSettings()
    assert settings.telemetry_exporter == "none"
    telemetry = telemetry_for("svc", settings)
    assert isinstance(telemetry.meter_provider, NoOpMeterProvider)
    with telemetry.tracer("svc").start_as_current_span("work") as span:
        assert not span.is_recording()
        assert span.get_span_context().is_valid
        assert inject_trace_context()["traceparent"].startswith("00-")
    telemetry.shutdown()


def test_the_console_exporter_records_spans_and_metrics() -> None:
    telemetry = build_telemetry("svc", "console")
    assert isinstance(telemetry.meter_provider, SdkMeterProvider)
    with telemetry.tracer("svc").start_as_current_span("work") as span:
        assert span.is_recording()
    telemetry.shutdown()


def test_the_otlp_exporter_builds_both_providers() -> None:
    telemetry = build_telemetry("svc", "otlp")  # nothing recorded: nothing to send at shutdown
    assert isinstance(telemetry.meter_provider, SdkMeterProvider)
    assert telemetry.tracer_provider.resource.attributes["service.name"] == "svc"
    telemetry.shutdown()


def test_the_setting_is_read_from_the_environment(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("SCRAPEJOBS_TELEMETRY_EXPORTER", "gcp")
    assert CommonSettings().telemetry_exporter == "gcp"
    monkeypatch.setenv("SCRAPEJOBS_TELEMETRY_EXPORTER", "jaeger")
    with pytest.raises(ValueError, match="telemetry_exporter"):
        CommonSettings()


def test_a_zero_ratio_records_no_trace() -> None:
    telemetry = build_telemetry("svc", "console", trace_ratio=0.0)
    with telemetry.tracer("svc").start_as_current_span("work") as span:
        assert not span.is_recording()
    telemetry.shutdown()
