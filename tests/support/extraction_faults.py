"""Extract functions for the extraction processes' tests (module-level: a spawned process
imports them by name)."""

from __future__ import annotations

from scrapejobs_shared.domain.jobspec import JobSpec
from scrapejobs_shared.ports.fetcher import FetchResponse
from scrapejobs_worker.page_extraction import ExtractedPage


def raising(response: FetchResponse, spec: JobSpec) -> ExtractedPage:
    raise RuntimeError(f"a bug on {response.url}")
