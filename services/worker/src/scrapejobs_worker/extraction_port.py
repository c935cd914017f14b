"""The port through which the worker's service logic has a fetched page extracted.

Extraction (the job's fields and formats, then its pipeline up to an ``ai`` stage) is CPU work
on content and expressions strangers wrote. The task runner depends on this module only; where
the work runs is the adapter's (:mod:`.extraction_processes`: processes of their own, within a
time budget)."""

from __future__ import annotations

from typing import Protocol

from scrapejobs_shared.domain.jobspec import JobSpec
from scrapejobs_shared.ports.fetcher import FetchResponse
from scrapejobs_worker.page_extraction import ExtractedPage


class PageExtractor(Protocol):
    async def extract(self, response: FetchResponse, spec: JobSpec) -> ExtractedPage:
        """The page's outcome; :class:`ExtractionOverBudget` when it did not end in time."""
        ...


class ExtractionOverBudget(Exception):
    """The page's extraction used more than its budget (and was stopped)."""

    def __init__(self, budget_s: float) -> None:
        super().__init__(f"extraction used more than {budget_s:g} s of CPU")
        self.budget_s = budget_s


class ExtractionCrashed(Exception):
    """What extracted the page died (a crash, or killed from outside): retried as transient."""


class ExtractionFailed(Exception):
    """Extraction raised (a bug: extraction reports a page's problems in its outcome)."""
