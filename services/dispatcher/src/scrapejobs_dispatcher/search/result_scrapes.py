"""Search results scraped through the queue: one job of the results' URLs (the caller's tenant,
lane, quota, politeness, SSRF guard, honest outcomes and page cache, as any job), waited for
until it ends or the search's time is up; answered with the pages that finished by then (the
job goes on: its id is in the answer's warning)."""

from __future__ import annotations

from dataclasses import dataclass

from scrapejobs_dispatcher.submission.submission import Submission
from scrapejobs_dispatcher.submission.sync_scrape import ScrapeTimedOut, SyncScrape
from scrapejobs_shared.domain.jobspec import JobRequest
from scrapejobs_shared.domain.records import TaskRecord


@dataclass(frozen=True, slots=True)
class Scraped:
    job_id: str
    pages: dict[str, TaskRecord]  # finished pages, by URL
    ended: bool  # the whole job ended within the wait


@dataclass(eq=False)
class ResultScrapes:
    scraper: SyncScrape

    async def scrape(self, tenant: str, request: JobRequest, wait_s: float) -> Scraped:
        try:
            job = await self.scraper.run(Submission(request, tenant), wait_s)
            job_id, ended = job.id, True
        except ScrapeTimedOut as exc:
            job_id, ended = exc.job_id, False
        listed = await self.scraper.store.list_tasks(job_id, len(request.urls or ()), None)
        pages = {task.url: task for task in listed.items if task.status.terminal}
        return Scraped(job_id, pages, ended)
