"""The /v2 endpoints: Firecrawl's scrape and batch scrape, over native jobs."""

from __future__ import annotations

from typing import Annotated

from fastapi import APIRouter, Depends, Header, Path, Query, Request
from fastapi.responses import JSONResponse

from scrapejobs_dispatcher.authentication import caller_of, require_caller
from scrapejobs_dispatcher.firecrawl.answer_models import (
    BatchStarted,
    BatchStatusAnswer,
    Cancelled,
    ErrorsAnswer,
    PageError,
    ScrapeAnswer,
    batch_status,
)
from scrapejobs_dispatcher.firecrawl.documents import document
from scrapejobs_dispatcher.firecrawl.errors import ERRORS, FirecrawlRoute
from scrapejobs_dispatcher.firecrawl.request_models import BatchScrapeBody, ScrapeBody
from scrapejobs_dispatcher.firecrawl.translation import (
    LABEL,
    InvalidOption,
    batch_request,
    scrape_request,
    valid_urls,
)
from scrapejobs_dispatcher.idempotent_submission import IdempotentSubmission
from scrapejobs_dispatcher.routes.jobs import JobIdSegment
from scrapejobs_dispatcher.service import JobNotFound, JobService, JobView
from scrapejobs_dispatcher.sync_scrape import ScrapeTimedOut, SyncScrape
from scrapejobs_shared.domain.statuses import TaskStatus

router = APIRouter(
    prefix="/v2",
    tags=["firecrawl"],
    route_class=FirecrawlRoute,
    dependencies=[Depends(require_caller)],
    responses=ERRORS,
)
BatchId = Annotated[str, Path(pattern=f"^{JobIdSegment.regex}$", description="The batch's id")]
PAGE_SIZE = 100
ERRORS_LISTED = 1000
BLOCKED = ("blocked_destination",)  # a scrape of these answers 403
ROBOTS = ("robots_disallowed",)
TIMED_OUT = ("timeout", "render_timeout")


@router.post("/scrape", response_model=ScrapeAnswer, response_model_by_alias=True)
async def scrape(body: ScrapeBody, request: Request) -> ScrapeAnswer | JSONResponse:
    """Scrape one URL and answer with its Document (a one-URL job, waited for up to
    ``timeout`` ms, or the service's longest wait). A page that answered with an HTTP error
    is a Document whose metadata says so; a destination refused by the fetch policy or
    robots.txt is a 403, a page that took too long a 408."""
    scraper: SyncScrape = request.app.state.sync_scrape
    try:
        scraped = await scraper.scrape(scrape_request(body))
    except ScrapeTimedOut as exc:
        return _failure(
            408,
            "SCRAPE_TIMEOUT",
            f"no result within {exc.timeout_s:g} s; the job goes on: {exc.job_id}",
            job_id=exc.job_id,
        )
    task = scraped.result
    if task is None:
        return _failure(409, "SCRAPE_CANCELLED", f"job {scraped.job.id} was cancelled")
    error = task.error or ""
    if task.status is not TaskStatus.SUCCEEDED and task.http_status is None:
        if error.startswith(BLOCKED) or error.startswith(ROBOTS):
            return _failure(403, "SCRAPE_BLOCKED", error, job_id=task.job_id)
        if error.startswith(TIMED_OUT):
            return _failure(408, "SCRAPE_TIMEOUT", error, job_id=task.job_id)
        return _failure(400, "SCRAPE_FAILED", f"could not scrape {task.url}: {error}")
    return ScrapeAnswer(data=document(task))


@router.post("/batch/scrape", response_model=BatchStarted, response_model_by_alias=True)
async def start_batch(
    body: BatchScrapeBody,
    request: Request,
    idempotency_key: Annotated[
        str | None,
        Header(
            alias="x-idempotency-key",
            description="Retry-safe: the same key and body return the batch started first",
        ),
    ] = None,
) -> BatchStarted:
    """Start a batch: one native job of its URLs (``ignoreInvalidURLs``: the invalid ones are
    left out and listed, else one is a 400 naming it)."""
    urls, invalid = valid_urls(body.urls)
    if invalid and not body.ignore_invalid_urls:
        index = body.urls.index(invalid[0])
        raise InvalidOption(f"urls[{index}]", f"not an http(s) URL: {invalid[0]!r}")
    if not urls:
        raise InvalidOption("urls", "no valid URL to scrape")
    native = batch_request(body, urls)
    if idempotency_key is not None:
        submissions: IdempotentSubmission = request.app.state.idempotent_submissions
        view = (await submissions.submit(native, idempotency_key, caller_of(request))).view
    else:
        view = await _jobs(request).submit(native)
    return BatchStarted(
        id=view.job.id,
        url=str(request.url_for("batch_status", batch_id=view.job.id)),
        invalid_urls=invalid if body.ignore_invalid_urls else None,
    )


@router.get(
    "/batch/scrape/{batch_id}",
    name="batch_status",
    response_model=BatchStatusAnswer,
    response_model_by_alias=True,
)
async def batch_status_of(
    batch_id: BatchId,
    request: Request,
    next_page: Annotated[
        str | None, Query(alias="next", description="The page token of a previous next URL")
    ] = None,
) -> BatchStatusAnswer:
    """The batch's status and a page of its Documents (``next`` pages on)."""
    jobs = _jobs(request)
    view = await _batch(jobs, batch_id)
    page = await jobs.results(batch_id, PAGE_SIZE, next_page)
    following = None
    if page.next_page_token:
        following = str(
            request.url_for("batch_status", batch_id=batch_id).include_query_params(
                next=page.next_page_token
            )
        )
    done = view.progress.done
    return BatchStatusAnswer(
        status=batch_status(view.job.status),
        total=view.total,
        completed=done,
        credits_used=done,
        expires_at=view.job.expire_at,
        next=following,
        data=[document(t) for t in page.items if t.status is TaskStatus.SUCCEEDED],
    )


@router.delete("/batch/scrape/{batch_id}", response_model=Cancelled)
async def cancel_batch(batch_id: BatchId, request: Request) -> Cancelled:
    """Cancel the batch: its pages not yet fetched never are."""
    jobs = _jobs(request)
    await _batch(jobs, batch_id)
    await jobs.cancel(batch_id)
    return Cancelled()


@router.get(
    "/batch/scrape/{batch_id}/errors", response_model=ErrorsAnswer, response_model_by_alias=True
)
async def batch_errors(batch_id: BatchId, request: Request) -> ErrorsAnswer:
    """The batch's failed pages (robots.txt refusals listed apart)."""
    jobs = _jobs(request)
    await _batch(jobs, batch_id)
    failed = await jobs.unsuccessful(batch_id, ERRORS_LISTED)
    robots = [t.url for t in failed if (t.error or "").startswith(ROBOTS)]
    errors = [
        PageError(id=t.id, timestamp=t.updated_at, url=t.url, error=t.error or t.status.value)
        for t in failed
        if not (t.error or "").startswith(ROBOTS)
    ]
    return ErrorsAnswer(errors=errors, robots_blocked=robots)


def _jobs(request: Request) -> JobService:
    service: JobService = request.app.state.jobs
    return service


async def _batch(jobs: JobService, batch_id: str) -> JobView:
    """The batch's job (a job that did not come from /v2/batch/scrape is not a batch)."""
    view = await jobs.get(batch_id)
    if view.job.labels.get(LABEL) != "batch":
        raise JobNotFound(batch_id)
    return view


def _failure(status: int, code: str, message: str, **extra: str) -> JSONResponse:
    content = {"success": False, "code": code, "error": message} | extra
    return JSONResponse(content, status_code=status)
