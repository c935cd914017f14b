"""Uploads read through the budgeted-work port (ports/budgeted_work.py: processes of their own,
each read within a CPU budget and a memory limit held by the kernel), as the worker's extraction
processes read pages: an upload is a stranger's file (a decompression bomb, a spreadsheet of a
million rows).

``concurrency`` processes read uploads at once in an instance, each kept for the next (the one
runner: adapters/budgeted_processes.py). A read past its CPU budget is ended by the kernel
(``SIGXCPU``): the upload fails ``extraction_timeout``; one whose allocation fails past its
memory limit (or, in native code such as PDFium inflating a decompression bomb, aborts) fails
``extraction_memory``; one that stops answering is killed after ``3 x (budget + 1) + 5`` s.
A read that raised (a fault of ours) fails ``internal_error``."""

from __future__ import annotations

import time
from dataclasses import replace
from datetime import UTC, datetime

from scrapejobs_shared.adapters.budgeted_processes import BudgetedProcesses, BudgetedWorkCrashed
from scrapejobs_shared.domain.jobspec import JobSpec
from scrapejobs_shared.domain.records import TaskOutcome
from scrapejobs_shared.domain.statuses import TaskStatus
from scrapejobs_shared.extraction.documents.ocr import OcrLimits
from scrapejobs_shared.outcomes.page_outcome import DEFAULT_OCR_LIMITS, extract_outcome
from scrapejobs_shared.ports.budgeted_work import Budget, OverBudget
from scrapejobs_shared.ports.fetcher import FetchResponse

from .parsing_port import EXTRACTION_MEMORY, EXTRACTION_TIMEOUT
from .upload import Upload


def read_upload(
    upload: Upload, spec: JobSpec, ocr_limits: OcrLimits = DEFAULT_OCR_LIMITS
) -> TaskOutcome:
    """``upload`` read as the worker reads a page it fetched with a ``200`` (its
    ``elapsed_ms``: the read's)."""
    started = time.monotonic()
    media_type = upload.media_type()
    headers = {"content-type": media_type} if media_type else {}
    response = FetchResponse(upload.url, 200, headers, upload.data, 0)
    outcome = extract_outcome(response, spec, ocr_limits).outcome
    elapsed_ms = round((time.monotonic() - started) * 1000)
    return replace(outcome, fetched_at=datetime.now(UTC), elapsed_ms=elapsed_ms)


def _failed(error: str) -> TaskOutcome:
    return TaskOutcome(
        TaskStatus.FAILED, http_status=200, error=error, fetched_at=datetime.now(UTC)
    )


class ParsingProcesses:
    def __init__(
        self,
        concurrency: int,
        budget_s: float,
        memory_mb: int,
        ocr_limits: OcrLimits = DEFAULT_OCR_LIMITS,
    ) -> None:
        """``ocr_limits``: each page read by OCR may add its own CPU budget to the read's."""
        self.budget = Budget(
            "upload's read",
            "SCRAPEJOBS_PARSE_BUDGET_S",
            budget_s,
            memory_mb,
            extendable_s=ocr_limits.document_cpu_s,
        )
        self.ocr_limits = ocr_limits
        self._work = BudgetedProcesses(concurrency)

    async def outcome(self, upload: Upload, spec: JobSpec) -> TaskOutcome:
        budget = self.budget
        try:
            return await self._work.run(budget, read_upload, upload, spec, self.ocr_limits)
        except OverBudget as exc:
            if exc.exceeded == "memory":
                return _failed(
                    f"{EXTRACTION_MEMORY}: reading the file needed more than {budget.memory_mb} MiB"
                )
            if exc.exceeded == "cpu":
                return _failed(
                    f"{EXTRACTION_TIMEOUT}: reading the file took more than {budget.cpu_s:g} s "
                    "of CPU"
                )
            return _failed(
                f"{EXTRACTION_TIMEOUT}: the file could not be read within its budgets: {exc}"
            )
        except BudgetedWorkCrashed as exc:
            return _failed(f"{EXTRACTION_TIMEOUT}: the file could not be read: {exc}")
        except Exception as exc:  # the read raised: a fault of ours, said as one
            return _failed(f"internal_error: reading the file failed: {type(exc).__name__}: {exc}")

    async def close(self) -> None:
        await self._work.close()
