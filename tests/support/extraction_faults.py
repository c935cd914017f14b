"""Extract functions for the extraction processes' tests (module-level: a spawned process
imports them by name)."""

from __future__ import annotations

import os
import time

from scrapejobs_shared.domain.jobspec import JobSpec
from scrapejobs_shared.domain.records import TaskOutcome, TaskStatus
from scrapejobs_shared.ports.fetcher import FetchResponse
from scrapejobs_worker.page_extraction import ExtractedPage


def raising(response: FetchResponse, spec: JobSpec) -> ExtractedPage:
    raise RuntimeError(f"a bug on {response.url}")


def whose(response: FetchResponse, spec: JobSpec) -> ExtractedPage:
    """The page's data says which process extracted it; a URL ending in ``/slow`` keeps that
    process busy for a second first (asleep: no CPU budget spent)."""
    if response.url.endswith("/slow"):
        time.sleep(1.0)
    return ExtractedPage(TaskOutcome(TaskStatus.SUCCEEDED, 200, {"pid": os.getpid()}))
