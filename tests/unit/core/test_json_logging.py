"""JSON log lines for Cloud Logging: severity, message, the process that wrote it, extras."""

from __future__ import annotations

import json
import logging
import os

from scrapejobs_shared.observability.json_logging import CloudLoggingFormatter


def test_a_line_names_its_process_and_carries_the_extras() -> None:
    record = logging.LogRecord("worker", logging.INFO, __file__, 1, "batch processed", None, None)
    record.job_id = "j1"
    line = json.loads(CloudLoggingFormatter("worker", "p").format(record))
    assert line["severity"] == "INFO" and line["message"] == "batch processed"
    assert line["pid"] == os.getpid()  # a worker runs several processes: lines tell them apart
    assert line["service"] == "worker" and line["job_id"] == "j1"
