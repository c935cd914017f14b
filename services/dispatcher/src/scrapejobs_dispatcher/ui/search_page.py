"""The dashboard's Search page (/ui/search): a query asked of the deployment's search provider
as the viewer's tenant (metered to it and kept a while, as any search), its results listed with
their links; which provider answers, or, without one, the setting that names it. A way to see
that search works here before an agent or a monitor depends on it."""

from __future__ import annotations

from typing import Annotated, Any

from fastapi import Depends, Query, Request
from fastapi.responses import HTMLResponse

from scrapejobs_dispatcher.dependencies import WebSearchDep, app_state
from scrapejobs_dispatcher.search.web_search import SearchAsk
from scrapejobs_dispatcher.ui import responses
from scrapejobs_dispatcher.ui.access import require_viewer
from scrapejobs_dispatcher.ui.dashboard_router import dashboard_router
from scrapejobs_shared.domain.tenancy import Caller
from scrapejobs_shared.errors import ScrapejobsError
from scrapejobs_shared.ports.search_engine import SOURCES, SearchQuery, SearchSource

router = dashboard_router()
RESULTS = 10
TIMEOUT_S = 15.0
PROVIDERS = {"searxng": "SearXNG (SCRAPEJOBS_SEARXNG_URL)", "ddgs": "public engines, via ddgs"}


@router.get("/search")
async def search_page(
    request: Request,
    searches: WebSearchDep,
    provider: Annotated[str | None, Depends(app_state("search_provider"))],
    viewer: Annotated[Caller, Depends(require_viewer)],
    q: Annotated[str, Query(max_length=500)] = "",
    source: SearchSource = "web",
) -> HTMLResponse:
    query = q.strip()
    context: dict[str, Any] = {
        "query": query,
        "source": source,
        "sources": SOURCES,
        "provider": PROVIDERS.get(provider or ""),
        "results": None,
        "error": None,
    }
    status = 200
    if query:
        ask = SearchAsk((("", SearchQuery(query, source, RESULTS)),), RESULTS)
        try:
            context["results"] = (await searches.find(viewer.tenant, ask, TIMEOUT_S)).hits()
        except ScrapejobsError as exc:  # none configured (503), failing (502), slow (504)
            context["error"], status = str(exc), exc.status
    return responses.render(request, "search.html", context, status)
