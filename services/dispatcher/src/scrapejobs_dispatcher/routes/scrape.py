"""REST resource: /v1/scrape, one page answered in the request."""

from __future__ import annotations

from fastapi.responses import JSONResponse

from scrapejobs_dispatcher.dependencies import ScrapeDep
from scrapejobs_dispatcher.jobs.views import (
    ScrapeAccepted,
    ScrapeResponse,
)
from scrapejobs_dispatcher.routes.native_router import error_responses, native_router
from scrapejobs_dispatcher.submission.sync_scrape import ScrapeTimedOut
from scrapejobs_dispatcher.tenants.authentication import CallerDep, require_caller
from scrapejobs_shared.domain.jobspec import ScrapeRequest

router = native_router("/v1/scrape", "scrape", require_caller)
ERRORS = error_responses(400, 401, 403, 408, 422, 500)


@router.post(
    "",
    response_model=ScrapeResponse,
    responses={
        **ERRORS,
        202: {
            "model": ScrapeAccepted,
            "description": "No result within timeout_s: the job goes on (Location: the job)",
        },
    },
)
async def scrape(
    body: ScrapeRequest, scraper: ScrapeDep, caller: CallerDep
) -> ScrapeResponse | JSONResponse:
    """Scrape one URL and answer with its result: a one-URL job through the same queue,
    workers, politeness and safety as ``POST /v1/jobs``, waited for up to ``timeout_s``. Past
    it, a ``202`` names the job, which goes on and stays queryable; a scrape whose result is
    not kept (``zero_data_retention``) is cancelled and deleted instead, a ``408``."""
    try:
        scraped = await scraper.scrape(body, caller.tenant)
    except ScrapeTimedOut as exc:
        accepted = ScrapeAccepted.of(exc.job_id, exc.timeout_s)
        return JSONResponse(
            accepted.model_dump(mode="json"),
            status_code=202,
            headers={"Location": f"/v1/jobs/{exc.job_id}"},
        )
    return ScrapeResponse.of(scraped.job, scraped.result)
