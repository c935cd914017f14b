"""The /v2 endpoints: Firecrawl's scrape, batch scrape, crawl and map, over native jobs."""

from __future__ import annotations

import time
from typing import Annotated, Literal

from fastapi import Header, Path, Query, Request
from fastapi.responses import JSONResponse
from starlette.convertors import Convertor, register_url_convertor

from scrapejobs_dispatcher.dependencies import (
    ChangeTrackerDep,
    JobsDep,
    RecoveryDep,
    ScrapeDep,
    SubmissionsDep,
)
from scrapejobs_dispatcher.firecrawl.answer_models import (
    ActiveCrawl,
    ActiveCrawls,
    BatchStarted,
    BatchStatusAnswer,
    Cancelled,
    CrawlStarted,
    ErrorsAnswer,
    MapAnswer,
    MapLink,
    PageError,
    ScrapeAnswer,
    batch_status,
)
from scrapejobs_dispatcher.firecrawl.dependencies import ServedHereDep, SiteMapperDep
from scrapejobs_dispatcher.firecrawl.errors import v2_router
from scrapejobs_dispatcher.firecrawl.format_translation import tracked_field
from scrapejobs_dispatcher.firecrawl.request_models import (
    BatchScrapeBody,
    CrawlBody,
    MapBody,
    ScrapeBody,
    ScrapeOptions,
)
from scrapejobs_dispatcher.firecrawl.site_map import StartPageUnreachable
from scrapejobs_dispatcher.firecrawl.translation import (
    LABEL,
    attach_key,
    batch_request,
    crawl_request,
    named_as_firecrawl,
    scrape_request,
    valid_urls,
)
from scrapejobs_dispatcher.jobs.job_errors import JobNotFound
from scrapejobs_dispatcher.jobs.job_service import JobService, JobView
from scrapejobs_dispatcher.jobs.recovery import Recovery
from scrapejobs_dispatcher.submission.submission import Submission
from scrapejobs_dispatcher.submission.sync_scrape import ScrapeTimedOut
from scrapejobs_dispatcher.tenants.authentication import CallerDep
from scrapejobs_shared.domain.statuses import JobStatus, TaskStatus
from scrapejobs_shared.domain.tenancy import Caller
from scrapejobs_shared.firecrawl.documents import document
from scrapejobs_shared.options import PAGE_CACHE, InvalidOption

router = v2_router()


class HexId(Convertor[str]):
    """A job's id in a /v2 path: hex, as every job id is, so ``/v2/crawl/active`` is only the
    list of active crawls (another method on it is a 405, not a crawl named "active")."""

    regex = "[0-9a-f]{1,64}"

    def convert(self, value: str) -> str:
        return value

    def to_string(self, value: str) -> str:
        return value


register_url_convertor("hex_id", HexId())
BatchId = Annotated[str, Path(pattern=f"^{HexId.regex}$", description="The job's id")]
NextPage = Annotated[
    str | None, Query(alias="next", description="The page token of a previous next URL")
]
IdempotencyKey = Annotated[
    str | None,
    Header(
        alias="x-idempotency-key",
        pattern=r"^[ -~]{1,255}$",  # printable ASCII, as IdempotentSubmission takes it
        description="Retry-safe: the same key and body return what the first request started",
    ),
]
Kind = Literal["batch", "crawl"]  # the label value of the endpoint a job came from
ACTIVE_LISTED = 100
RESUME_AFTER_S = 5  # a scrape past its wait: when to ask again (the SDK waits at least 5 s)
FIRST_PAGE = "0"  # a next token: the first page of documents, asked for while still running
PAGE_SIZE = 100
ERRORS_LISTED = 1000
BLOCKED = ("blocked_destination",)  # a scrape of these answers 403
ROBOTS = ("robots_disallowed",)
TIMED_OUT = ("timeout", "render_timeout")


@router.post("/scrape", response_model=ScrapeAnswer, response_model_by_alias=True)
async def scrape(
    body: ScrapeBody,
    request: Request,
    scraper: ScrapeDep,
    here: ServedHereDep,
    submissions: SubmissionsDep,
    tracker: ChangeTrackerDep,
    caller: CallerDep,
) -> ScrapeAnswer | JSONResponse:
    """Scrape one URL and answer with its Document (a one-URL job, waited for up to
    ``timeout`` ms, or the service's longest wait). A page that answered with an HTTP error
    is a Document whose metadata says so; a destination refused by the fetch policy or
    robots.txt is a 403, a page that took too long a 408."""
    native = scrape_request(body, here)
    key = attach_key(native, PAGE_CACHE.max_age_ms(body), time.time())
    try:
        with named_as_firecrawl():
            scraped = await scraper.scrape(native, caller.tenant, key)
    except ScrapeTimedOut as exc:
        message = f"no result within {exc.timeout_s:g} s; the job goes on: {exc.job_id}"
        if key is None:  # maxAge 0: a retry would start another job
            return _failure(408, "SCRAPE_TIMEOUT", message, job_id=exc.job_id)
        # the same request again finds this job (Firecrawl's SDK retries it by itself)
        details = {"state": "processing_continues", "retryAfterSeconds": RESUME_AFTER_S}
        return _failure(
            408,
            "SCRAPE_TIMEOUT",
            message,
            headers={"Retry-After": str(RESUME_AFTER_S)},
            job_id=exc.job_id,
            details=details,
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
    found = document(task)
    tracking = body.change_tracking()
    if tracking is not None:
        found["changeTracking"] = await tracker.tracked(
            caller.tenant, tracking.tag, task, tracking.modes, tracked_field(body)
        )
    return ScrapeAnswer(data=found)


@router.post("/map", response_model=MapAnswer, response_model_by_alias=True)
async def map_site(
    body: MapBody, mapper: SiteMapperDep, caller: CallerDep
) -> MapAnswer | JSONResponse:
    """The URLs of the site at ``url``: its sitemaps' and its page's links (robots.txt
    honoured), fetched by the workers as jobs of a few pages and waited for up to
    ``timeout`` ms. A start page refused by the fetch policy answers 403."""
    try:
        links = await mapper.links(body, caller.tenant)
    except ScrapeTimedOut as exc:
        message = f"the site's pages were not read within {exc.timeout_s:g} s"
        return _failure(408, "MAP_TIMEOUT", message, job_id=exc.job_id)
    except StartPageUnreachable as exc:
        if exc.reason.startswith(BLOCKED) or exc.reason.startswith(ROBOTS):
            return _failure(403, "MAP_BLOCKED", exc.reason)
        return _failure(400, "MAP_FAILED", f"could not map {body.url}: {exc.reason}")
    return MapAnswer(links=[MapLink(url=url) for url in links])


@router.post("/batch/scrape", response_model=BatchStarted, response_model_by_alias=True)
async def start_batch(
    body: BatchScrapeBody,
    request: Request,
    jobs: JobsDep,
    here: ServedHereDep,
    submissions: SubmissionsDep,
    caller: CallerDep,
    idempotency_key: IdempotencyKey = None,
) -> BatchStarted:
    """Start a batch: one native job of its URLs (``ignoreInvalidURLs``: the invalid ones are
    left out and listed, else one is a 400 naming it)."""
    _untracked(body)
    urls, invalid = valid_urls(body.urls)
    if invalid and not body.ignore_invalid_urls:
        index = body.urls.index(invalid[0])
        raise InvalidOption(f"urls[{index}]", f"not an http(s) URL: {invalid[0]!r}")
    if not urls:
        raise InvalidOption("urls", "no valid URL to scrape")
    native = batch_request(body, urls, here)
    with named_as_firecrawl():
        view = (await submissions.submit(Submission(native, caller.tenant), idempotency_key)).view
    return BatchStarted(
        id=view.job.id,
        url=_status_url(request, "batch", view.job.id),
        invalid_urls=invalid if body.ignore_invalid_urls else None,
    )


@router.get(
    "/batch/scrape/{batch_id:hex_id}",
    name="batch_status",
    response_model=BatchStatusAnswer,
    response_model_by_alias=True,
)
async def batch_status_of(
    batch_id: BatchId,
    request: Request,
    jobs: JobsDep,
    caller: CallerDep,
    next_page: NextPage = None,
) -> BatchStatusAnswer:
    """The batch's status and a page of its Documents (``next`` pages on)."""
    return await _status(request, jobs, caller, batch_id, "batch", next_page)


@router.delete("/batch/scrape/{batch_id:hex_id}", response_model=Cancelled)
async def cancel_batch(batch_id: BatchId, jobs: JobsDep, caller: CallerDep) -> Cancelled:
    """Cancel the batch: its pages not yet fetched never are."""
    return await _cancel(jobs, caller, batch_id, "batch")


@router.get(
    "/batch/scrape/{batch_id:hex_id}/errors",
    response_model=ErrorsAnswer,
    response_model_by_alias=True,
)
async def batch_errors(
    batch_id: BatchId, jobs: JobsDep, recovery: RecoveryDep, caller: CallerDep
) -> ErrorsAnswer:
    """The batch's failed pages (robots.txt refusals listed apart)."""
    return await _errors(jobs, recovery, caller, batch_id, "batch")


@router.post("/crawl", response_model=CrawlStarted)
async def start_crawl(
    body: CrawlBody,
    request: Request,
    jobs: JobsDep,
    here: ServedHereDep,
    submissions: SubmissionsDep,
    caller: CallerDep,
    idempotency_key: IdempotencyKey = None,
) -> CrawlStarted:
    """Start a crawl: one native crawl job from ``url`` (every page found is scraped with
    ``scrapeOptions``; robots.txt, the site's pace and its breaker hold as for any job)."""
    _untracked(body.scrape_options, "scrapeOptions.formats")
    native = crawl_request(body, here)
    with named_as_firecrawl("scrapeOptions"):
        view = (await submissions.submit(Submission(native, caller.tenant), idempotency_key)).view
    return CrawlStarted(id=view.job.id, url=_status_url(request, "crawl", view.job.id))


@router.get("/crawl/active", response_model=ActiveCrawls, response_model_by_alias=True)
async def active_crawls(jobs: JobsDep, caller: CallerDep) -> ActiveCrawls:
    """Crawls not yet ended (the most recent ``ACTIVE_LISTED``)."""
    found: dict[str, ActiveCrawl] = {}
    # queued before running: a job moving on between the two reads is found in the second
    for status in (JobStatus.QUEUED, JobStatus.RUNNING):
        page = await jobs.list_jobs(status, ACTIVE_LISTED, None, caller.scope())
        for job in page.items:
            if job.labels.get(LABEL) == "crawl" and job.spec.crawl is not None:
                start = job.spec.crawl.start_url
                found[job.id] = ActiveCrawl(id=job.id, team_id="", url=start, options=None)
    return ActiveCrawls(crawls=list(found.values())[:ACTIVE_LISTED])


@router.get(
    "/crawl/{crawl_id:hex_id}",
    name="crawl_status",
    response_model=BatchStatusAnswer,
    response_model_by_alias=True,
)
async def crawl_status_of(
    crawl_id: BatchId,
    request: Request,
    jobs: JobsDep,
    caller: CallerDep,
    next_page: NextPage = None,
) -> BatchStatusAnswer:
    """The crawl's status and a page of its Documents (``next`` pages on); ``total`` grows
    as pages are found."""
    return await _status(request, jobs, caller, crawl_id, "crawl", next_page)


@router.delete("/crawl/{crawl_id:hex_id}", response_model=Cancelled)
async def cancel_crawl(crawl_id: BatchId, jobs: JobsDep, caller: CallerDep) -> Cancelled:
    """Cancel the crawl: pages not yet fetched never are, and no more are found."""
    return await _cancel(jobs, caller, crawl_id, "crawl")


@router.get(
    "/crawl/{crawl_id:hex_id}/errors", response_model=ErrorsAnswer, response_model_by_alias=True
)
async def crawl_errors(
    crawl_id: BatchId, jobs: JobsDep, recovery: RecoveryDep, caller: CallerDep
) -> ErrorsAnswer:
    """The crawl's failed pages (robots.txt refusals listed apart)."""
    return await _errors(jobs, recovery, caller, crawl_id, "crawl")


def _untracked(options: ScrapeOptions | None, field: str = "formats") -> None:
    """A batch or a crawl compares no page with an earlier one: changeTracking is a 400."""
    if options is not None and options.change_tracking() is not None:
        why = "changeTracking is offered on /v2/scrape and in monitors (/v2/monitor)"
        raise InvalidOption(field, why)


def _status_url(request: Request, kind: Kind, job_id: str, token: str | None = None) -> str:
    url = request.url_for(f"{kind}_status", **{f"{kind}_id": job_id})
    return str(url.include_query_params(next=token) if token else url)


async def _status(
    request: Request,
    jobs: JobService,
    caller: Caller,
    job_id: str,
    kind: Kind,
    next_page: str | None,
) -> BatchStatusAnswer:
    view = await _job_of(jobs, caller, job_id, kind)
    answer = BatchStatusAnswer(
        status=batch_status(view.job.status),
        total=view.total,
        completed=view.progress.done,
        credits_used=view.charged,
        expires_at=view.job.expire_at,
        next=None,
        data=[],
    )
    if next_page is None and not view.job.status.terminal:
        # running: no documents, a link to those finished so far (the SDK's wait re-reads
        # every page of documents on every poll when the first answer carries any)
        answer.next = _status_url(request, kind, job_id, FIRST_PAGE) if view.progress.done else None
        return answer
    token = None if next_page == FIRST_PAGE else next_page
    page = await jobs.results(job_id, PAGE_SIZE, token, caller)
    following = page.next_page_token
    answer.next = _status_url(request, kind, job_id, following) if following else None
    answer.data = [document(t) for t in page.items if t.status is TaskStatus.SUCCEEDED]
    return answer


async def _cancel(jobs: JobService, caller: Caller, job_id: str, kind: Kind) -> Cancelled:
    await _job_of(jobs, caller, job_id, kind)
    await jobs.cancel(job_id, caller)
    return Cancelled()


async def _errors(
    jobs: JobService, recovery: Recovery, caller: Caller, job_id: str, kind: Kind
) -> ErrorsAnswer:
    await _job_of(jobs, caller, job_id, kind)
    failed = await recovery.unsuccessful(job_id, ERRORS_LISTED, caller)
    robots = [t.url for t in failed if (t.error or "").startswith(ROBOTS)]
    errors = [
        PageError(id=t.id, timestamp=t.updated_at, url=t.url, error=t.error or t.status.value)
        for t in failed
        if not (t.error or "").startswith(ROBOTS)
    ]
    return ErrorsAnswer(errors=errors, robots_blocked=robots)


async def _job_of(jobs: JobService, caller: Caller, job_id: str, kind: Kind) -> JobView:
    """The job of a batch or crawl (a job that did not come from that endpoint is not one)."""
    view = await jobs.get(job_id, caller)
    if view.job.labels.get(LABEL) != kind:
        raise JobNotFound(job_id)
    return view


def _failure(
    status: int,
    code: str,
    message: str,
    headers: dict[str, str] | None = None,
    **extra: object,
) -> JSONResponse:
    content = {"success": False, "code": code, "error": message} | extra
    return JSONResponse(content, status_code=status, headers=headers)
