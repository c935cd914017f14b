"""Exporting a job's results: the job first (so a missing job is a 404 before anything is
streamed), then its results page by page as the caller reads on (result_export.py renders
them)."""

from __future__ import annotations

from collections.abc import AsyncIterator
from dataclasses import dataclass

from scrapejobs_dispatcher.jobs.job_errors import live_job
from scrapejobs_shared.domain.clock import Clock
from scrapejobs_shared.domain.records import JobRecord, TaskRecord
from scrapejobs_shared.domain.tenancy import Caller
from scrapejobs_shared.ports.job_store import JobReads

EXPORT_PAGE = 500  # results read per store call while a job's results are exported


@dataclass(frozen=True, slots=True)
class ResultPages:
    """Every result of ``job``, read page by page as ``pages`` is iterated (at most one page
    held at a time; the store is read only while the consumer takes pages)."""

    job: JobRecord
    pages: AsyncIterator[list[TaskRecord]]


class JobExport:
    def __init__(self, store: JobReads, clock: Clock) -> None:
        self._store = store
        self._clock = clock

    async def all_results(
        self, job_id: str, caller: Caller | None, page_size: int = EXPORT_PAGE
    ) -> ResultPages:
        """For an export: the job now (``JobNotFound`` before anything is streamed), its
        results in the results API's order as the caller reads on."""
        job = await live_job(self._store, job_id, self._clock(), caller)
        return ResultPages(job, self._result_pages(job_id, page_size))

    async def _result_pages(self, job_id: str, page_size: int) -> AsyncIterator[list[TaskRecord]]:
        token: str | None = None
        while True:
            page = await self._store.list_tasks(job_id, page_size, token)
            if page.items:
                yield page.items
            token = page.next_page_token
            if token is None:
                return
