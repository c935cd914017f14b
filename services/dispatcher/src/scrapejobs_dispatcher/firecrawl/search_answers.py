"""Firecrawl's search answered: the results of each source as Firecrawl lists them, and, with
``scrapeOptions``, the web and news results scraped through the queue (one job) and each
answered as its Document too, all within the request's ``timeout``. A result a job refuses
(not an http(s) URL) is listed and not scraped, or left out with ``ignoreInvalidURLs``; a
result whose site is refused by the fetch policy (a private address, the metadata server) is
never fetched, and its Document says why."""

from __future__ import annotations

import time
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import Any

from scrapejobs_dispatcher.firecrawl.request_models import ScrapeOptions
from scrapejobs_dispatcher.firecrawl.search_models import SearchBody, SearchBodyV1
from scrapejobs_dispatcher.firecrawl.search_translation import (
    SCRAPED,
    result_item,
    search_ask,
    search_job,
    to_scrape,
)
from scrapejobs_dispatcher.firecrawl.translation import named_as_firecrawl
from scrapejobs_dispatcher.search.result_scrapes import ResultScrapes
from scrapejobs_dispatcher.search.web_search import Found, WebSearch
from scrapejobs_shared.domain.jobspec import JobRequest
from scrapejobs_shared.firecrawl.documents import document
from scrapejobs_shared.options import InvalidOption, ServedHere

# the scrape options are checked before searching (a job of them must be one this deployment
# runs, whatever the results): on a job of this one URL, never submitted
PROBE_URL = "https://search-result.invalid/"


@dataclass(frozen=True, slots=True)
class Searched:
    data: dict[str, list[dict[str, Any]]]
    warning: str | None
    credits: int


@dataclass(eq=False)
class FirecrawlSearch:
    searches: WebSearch
    scrapes: ResultScrapes
    here: ServedHere
    allowed: Callable[[JobRequest, str], Awaitable[None]]  # the submission's shape rules
    clock: Callable[[], float] = time.monotonic

    async def answer(self, body: SearchBody | SearchBodyV1, tenant: str) -> Searched:
        deadline = self.clock() + body.timeout / 1000
        options = body.scrape_options
        if options is not None:
            await self._check(options, tenant)
        found = await self.searches.find(tenant, search_ask(body), body.timeout / 1000)
        urls, refused = to_scrape(found, body.ignore_invalid_urls)
        data = _listed(found, set(urls) if body.ignore_invalid_urls else None)
        warnings = [f"not scraped, not a URL a job takes: {', '.join(refused)}"] if refused else []
        credits = found.credits  # metered to the tenant by the search (web_search.py)
        if options is not None and urls:
            with named_as_firecrawl("scrapeOptions"):
                request = search_job(options, urls, self.here)
                wait_s = max(0.0, deadline - self.clock())
                scraped = await self.scrapes.scrape(tenant, request, wait_s)
            for source in SCRAPED:
                for item in data.get(source, []):
                    if (task := scraped.pages.get(item["url"])) is not None:
                        item.update(document(task))
            if not scraped.ended:
                job = scraped.job_id
                warnings.append(
                    f"some results were not scraped within the timeout (job {job} goes on)"
                )
            credits += sum(1 for task in scraped.pages.values() if task.http_status is not None)
        return Searched(data, "; ".join(warnings) or None, credits)

    async def _check(self, options: ScrapeOptions, tenant: str) -> None:
        """The scrape options, whatever the results: a job of them is one this deployment
        runs (a 400 naming the field before any search)."""
        if options.change_tracking() is not None:
            why = "changeTracking is offered on /v2/scrape and in monitors (/v2/monitor)"
            raise InvalidOption("scrapeOptions.formats", why)
        with named_as_firecrawl("scrapeOptions"):
            await self.allowed(search_job(options, [PROBE_URL], self.here), tenant)


def _listed(found: Found, kept: set[str] | None) -> dict[str, list[dict[str, Any]]]:
    """Each source's results as Firecrawl lists them (``kept``: the web and news results a job
    takes, the others left out)."""
    data: dict[str, list[dict[str, Any]]] = {}
    for source, hits in found.by_source.items():
        if kept is not None and source in SCRAPED:
            hits = [hit for hit in hits if hit.url in kept]
        data[source] = [result_item(source, hit, n) for n, hit in enumerate(hits, 1)]
    return data
