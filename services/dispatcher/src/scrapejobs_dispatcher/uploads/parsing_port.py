"""Reading an upload into a task's outcome, as the worker reads a page it fetched (formats,
the job's pipeline stages before ``ai``, the result fitted under its size limit)."""

from __future__ import annotations

from typing import Protocol

from scrapejobs_shared.domain.jobspec import JobSpec
from scrapejobs_shared.domain.records import TaskOutcome

from .upload import Upload

EXTRACTION_TIMEOUT = "extraction_timeout"
EXTRACTION_MEMORY = "extraction_memory"


class UploadParsing(Protocol):
    async def outcome(self, upload: Upload, spec: JobSpec) -> TaskOutcome:
        """``upload`` read as ``spec`` asks: ``succeeded`` with its data, or ``failed`` saying
        why (unsupported, unreadable, a bomb, past the CPU or memory budget)."""
        ...
