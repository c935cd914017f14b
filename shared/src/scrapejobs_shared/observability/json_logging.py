"""JSON-lines logging in the shape Cloud Logging understands (severity, message, trace)."""

from __future__ import annotations

import json
import logging
import sys
from datetime import UTC, datetime
from typing import Any

from opentelemetry import trace

_STANDARD = set(logging.makeLogRecord({}).__dict__) | {"message", "asctime", "taskName"}


class CloudLoggingFormatter(logging.Formatter):
    def __init__(self, service: str, project_id: str | None = None) -> None:
        super().__init__()
        self._service = service
        self._project_id = project_id

    def format(self, record: logging.LogRecord) -> str:
        entry: dict[str, Any] = {
            "severity": record.levelname,
            "message": record.getMessage(),
            "time": datetime.fromtimestamp(record.created, UTC).isoformat(),
            "logger": record.name,
            "service": self._service,
            "pid": record.process,  # a service may run several processes (worker: one per core)
        }
        entry.update(self._trace_fields())
        entry.update({k: v for k, v in record.__dict__.items() if k not in _STANDARD})
        if record.exc_info:
            entry["stack_trace"] = self.formatException(record.exc_info)
        return json.dumps(entry, default=str)

    def _trace_fields(self) -> dict[str, Any]:
        span = trace.get_current_span().get_span_context()
        if not span.is_valid:
            return {}
        trace_id = format(span.trace_id, "032x")
        prefix = f"projects/{self._project_id}/traces/" if self._project_id else ""
        return {
            "logging.googleapis.com/trace": f"{prefix}{trace_id}",
            "logging.googleapis.com/spanId": format(span.span_id, "016x"),
            "logging.googleapis.com/trace_sampled": span.trace_flags.sampled,
        }


def configure_logging(service: str, level: str = "INFO", project_id: str | None = None) -> None:
    """Route the root logger to stdout as JSON lines (call once, from a process entrypoint)."""
    handler = logging.StreamHandler(sys.stdout)
    handler.setFormatter(CloudLoggingFormatter(service, project_id))
    root = logging.getLogger()
    root.handlers[:] = [handler]
    root.setLevel(level.upper())
    for noisy in ("httpx", "httpcore", "aiohttp", "google", "urllib3", "grpc"):
        logging.getLogger(noisy).setLevel(logging.WARNING)
