"""A job whose pages a search finds (``POST /v1/jobs`` with ``search``, a monitor of a query):
the job source (submission/job_sources.py) whose search is run as the job is submitted (the
caller's tenant's, kept a while as any search) and its results, once each, become the job's
URLs; a result that is not a page a job takes (not http(s)) is left out. A search that finds no
page is a 422 naming ``search.query``, never an empty job."""

from __future__ import annotations

from dataclasses import dataclass

from scrapejobs_dispatcher.search.web_search import SearchAsk, WebSearch
from scrapejobs_shared.domain.jobspec import JobRequest
from scrapejobs_shared.errors import InvalidInput
from scrapejobs_shared.extraction.field_types import is_task_url
from scrapejobs_shared.ports.search_engine import SearchQuery

SEARCH_TIMEOUT_S = 30.0  # the provider's time, within a submission's


@dataclass(eq=False)
class SearchTargets:  # a JobSources
    searches: WebSearch
    timeout_s: float = SEARCH_TIMEOUT_S

    def finds(self, request: JobRequest) -> bool:
        return request.search is not None

    async def resolved(self, request: JobRequest, tenant: str) -> JobRequest:
        """``request`` with a search target's results as its URLs (any other as it is)."""
        target = request.search
        if target is None:
            return request
        queries = tuple(
            ("", SearchQuery(target.query, source, target.limit))
            for source in dict.fromkeys(target.sources)
        )
        found = await self.searches.find(tenant, SearchAsk(queries, target.limit), self.timeout_s)
        urls = [url for url in dict.fromkeys(hit.url for hit in found.hits()) if is_task_url(url)]
        if not urls:
            raise InvalidInput(
                f"search.query: the search for {target.query!r} found no page to scrape",
                "search.query",
            )
        return request.model_copy(update={"search": None, "urls": urls})
