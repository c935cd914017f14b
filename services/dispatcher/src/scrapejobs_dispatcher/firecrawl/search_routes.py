"""Firecrawl's search: ``POST /v2/search`` (results by source) and v1's ``POST /v1/search`` (web
results as a list), over the deployment's search provider (SCRAPEJOBS_SEARXNG_URL)."""

from __future__ import annotations

from typing import Annotated

from fastapi import Depends

from scrapejobs_dispatcher.dependencies import app_state
from scrapejobs_dispatcher.firecrawl.errors import FirecrawlError, v2_router
from scrapejobs_dispatcher.firecrawl.search_answers import FirecrawlSearch
from scrapejobs_dispatcher.firecrawl.search_models import (
    SearchAnswer,
    SearchAnswerV1,
    SearchBody,
    SearchBodyV1,
)
from scrapejobs_dispatcher.tenants.authentication import CallerDep

router = v2_router()
v1_router = v2_router("/v1")
SearchDep = Annotated[FirecrawlSearch, Depends(app_state("firecrawl_search"))]
# the provider failing, or slower than the request's timeout (its absence: the router's 503)
PROVIDER_ERRORS: dict[int | str, dict[str, object]] = {
    code: {"model": FirecrawlError} for code in (502, 504)
}


@router.post(
    "/search",
    response_model=SearchAnswer,
    response_model_by_alias=True,
    responses=PROVIDER_ERRORS,
)
async def search(body: SearchBody, searches: SearchDep, caller: CallerDep) -> SearchAnswer:
    """Search the web (and news, images), and with ``scrapeOptions`` scrape the web and news
    results through the queue, all within ``timeout`` ms. No provider configured: a 503
    naming SCRAPEJOBS_SEARXNG_URL; the provider failing or slow: a 502 or a 504."""
    searched = await searches.answer(body, caller.tenant)
    return SearchAnswer(data=searched.data, warning=searched.warning, credits_used=searched.credits)


@v1_router.post("/search", response_model=SearchAnswerV1, responses=PROVIDER_ERRORS)
async def search_v1(body: SearchBodyV1, searches: SearchDep, caller: CallerDep) -> SearchAnswerV1:
    """v1's search: the web results as a list (each a Document too with ``scrapeOptions``)."""
    searched = await searches.answer(body, caller.tenant)
    return SearchAnswerV1(data=searched.data.get("web", []), warning=searched.warning)
