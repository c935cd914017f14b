"""The port through which the worker's service logic has a fetched page extracted.

Extraction (the job's fields and formats, then its pipeline up to an ``ai`` stage) is CPU work
on content and expressions strangers wrote. The task runner depends on this module only; where
the work runs is the adapter's (:mod:`.extraction_processes`: processes of their own, within a
time budget)."""

from __future__ import annotations

from typing import Protocol

from scrapejobs_shared.domain.jobspec import JobSpec
from scrapejobs_shared.errors import WorkFailed
from scrapejobs_shared.outcomes.page_outcome import ExtractedPage
from scrapejobs_shared.ports.fetcher import FetchResponse


class PageExtractor(Protocol):
    async def extract(self, response: FetchResponse, spec: JobSpec) -> ExtractedPage:
        """The page's outcome; :class:`ExtractionStopped` when it passed its CPU budget
        (:class:`ExtractionOverBudget`) or its memory (:class:`ExtractionOverMemory`)."""
        ...


class ExtractionStopped(WorkFailed):
    """The page's extraction was stopped past one of its budgets: the page fails with
    ``error`` (permanent), and the worker and its other pages go on."""

    def __init__(self, error: str) -> None:
        super().__init__(error)
        self.error = error


class ExtractionOverBudget(ExtractionStopped):
    """The page's extraction used more CPU than its budget (and was stopped)."""

    def __init__(self, budget_s: float) -> None:
        super().__init__(
            f"extraction_timeout: extracting the page and running its pipeline used more than "
            f"{budget_s:g} s of CPU (SCRAPEJOBS_EXTRACTION_BUDGET_S); simplify the job's "
            "selectors or pipeline"
        )
        self.budget_s = budget_s


class ExtractionOverMemory(ExtractionStopped):
    """The page's extraction needed more memory than its process may take (and was stopped)."""

    def __init__(self, limit_mb: int) -> None:
        super().__init__(
            f"extraction_memory: extracting the page and running its pipeline needed more than "
            f"{limit_mb} MiB (SCRAPEJOBS_EXTRACTION_MEMORY_MB); simplify the job's selectors or "
            "pipeline (an expression that builds large strings, such as re:replace over the "
            "whole page, is the usual cause)"
        )
        self.limit_mb = limit_mb


class ExtractionCrashed(WorkFailed):
    """What extracted the page died (a crash, or killed from outside): retried as transient."""


class ExtractionFailed(WorkFailed):
    """Extraction raised (a bug: extraction reports a page's problems in its outcome)."""
