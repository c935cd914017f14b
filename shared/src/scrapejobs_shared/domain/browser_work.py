"""What a rendered page's browser does besides reading it, derived from the job once: the
screenshot its formats ask for, and where the files it makes (screenshots, actions' PDFs) are
kept. The fetch carries it (``FetchRequest.browser``); the renderer takes the screenshot and
the file keeper (``rendering/kept_files.py``) stores the files, so the task's runner knows
neither feature."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime

from scrapejobs_shared.domain.jobspec import JobOptions
from scrapejobs_shared.domain.records import BatchRecord
from scrapejobs_shared.extraction.formats.screenshot import ScreenshotOptions, screenshot_asked
from scrapejobs_shared.options import RENDER


@dataclass(frozen=True, slots=True)
class FileDestination:
    """Where the files a fetch makes (a screenshot) are kept: the task's place in its
    tenant's file store, until its job expires."""

    tenant: str
    job_id: str
    task_id: str
    expire_at: datetime


@dataclass(frozen=True, slots=True)
class BrowserWork:
    files: FileDestination
    screenshot: ScreenshotOptions | None = None  # taken once the page settled


def browser_work(options: JobOptions, batch: BatchRecord, task_id: str) -> BrowserWork | None:
    """The browser's work on task ``task_id`` of ``batch`` (None: the job does not render)."""
    if RENDER.of(options) is None:
        return None
    where = FileDestination(batch.tenant, batch.job_id, task_id, batch.expire_at)
    return BrowserWork(where, screenshot_asked(options.formats))
