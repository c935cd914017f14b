"""The dashboard's routes under /ui, behind the API's authentication: full pages, the fragments
htmx polls to keep them live, and the replay actions. Handlers only pick a page builder and a
template; the builders (pages.py) read the service objects."""

from __future__ import annotations

from typing import Annotated, Any

from fastapi import APIRouter, Depends, Query, Request
from fastapi.responses import HTMLResponse
from fastapi.staticfiles import StaticFiles
from fastapi.templating import Jinja2Templates
from starlette.responses import Response

from scrapejobs_dispatcher.authentication import require_caller
from scrapejobs_dispatcher.service import JobNotFound, JobService
from scrapejobs_dispatcher.ui import pages
from scrapejobs_shared.adapters.page_token import InvalidPageToken
from scrapejobs_shared.domain.clock import utc_now

router = APIRouter(
    prefix="/ui",
    include_in_schema=False,
    dependencies=[Depends(require_caller)],
    default_response_class=HTMLResponse,
)

PageToken = Annotated[str | None, Query(max_length=2048)]
JobFilter = Annotated[str | None, Query(max_length=64, pattern=r"^[A-Za-z0-9_\-]*$")]


def _services(request: Request) -> pages.Services:
    state = request.app.state
    return pages.Services(state.jobs, state.monitor, state.host_gate, utc_now)


Services = Annotated[pages.Services, Depends(_services)]


def _render(
    request: Request, template: str, context: dict[str, Any], status: int = 200
) -> HTMLResponse:
    templates: Jinja2Templates = request.app.state.ui_templates
    response: HTMLResponse = templates.TemplateResponse(
        request, template, context, status_code=status
    )
    return response


def _problem(request: Request, status: int, title: str, detail: str) -> HTMLResponse:
    """An error as a page (or, for htmx, a fragment it shows in place)."""
    context = {"title": title, "detail": detail, "status": status}
    template = "_problem.html" if _from_htmx(request) else "problem.html"
    return _render(request, template, context, status)


async def _page(request: Request, template: str, build: Any) -> HTMLResponse:
    """Render ``template`` with what ``build`` (an awaitable context) gives, or the problem
    page an unknown job or a bad page token calls for."""
    try:
        context = await build
    except JobNotFound as exc:
        return _problem(request, 404, "Job not found", f"There is no job {exc}.")
    except InvalidPageToken as exc:
        return _problem(request, 400, "Bad page link", f"This page link is not valid: {exc}")
    return _render(request, template, context)


def _known_job_id(job_id: str) -> bool:
    return ":" not in job_id and 0 < len(job_id) <= 128


@router.get("")
async def home(request: Request, services: Services, page_token: PageToken = None) -> HTMLResponse:
    async def build() -> dict[str, Any]:
        live = await pages.overview(services, page_token)
        return live | await pages.history(services)

    return await _page(request, "home.html", build())


@router.get("/fragments/overview")
async def overview_fragment(
    request: Request, services: Services, page_token: PageToken = None
) -> HTMLResponse:
    return await _page(request, "_overview.html", pages.overview(services, page_token))


@router.get("/fragments/history")
async def history_fragment(request: Request, services: Services) -> HTMLResponse:
    return await _page(request, "_history.html", pages.history(services))


@router.get("/jobs/{job_id}")
async def job(
    request: Request, job_id: str, services: Services, page_token: PageToken = None
) -> HTMLResponse:
    if not _known_job_id(job_id):
        return _problem(request, 404, "Job not found", "There is no such job.")
    return await _page(request, "job.html", pages.job_page(services, job_id, page_token))


@router.get("/fragments/jobs/{job_id}")
async def job_fragment(request: Request, job_id: str, services: Services) -> HTMLResponse:
    if not _known_job_id(job_id):
        return _problem(request, 404, "Job not found", "There is no such job.")
    return await _page(request, "_job_summary.html", pages.job_summary(services, job_id))


@router.get("/dead-letters")
async def dead_letters(
    request: Request, services: Services, job_id: JobFilter = None, page_token: PageToken = None
) -> HTMLResponse:
    build = pages.dead_letters(services, job_id or None, page_token)
    return await _page(request, "dead_letters.html", build)


@router.get("/fragments/dead-letters")
async def dead_letters_fragment(
    request: Request, services: Services, job_id: JobFilter = None, page_token: PageToken = None
) -> HTMLResponse:
    build = pages.dead_letters(services, job_id or None, page_token)
    return await _page(request, "_dead_letters.html", build)


def _from_htmx(request: Request) -> bool:
    """Actions are sent by htmx, which sets ``HX-Request``: a cross-site form cannot set a
    header without a CORS preflight, so this also keeps other sites from replaying tasks."""
    return request.headers.get("hx-request") == "true"


async def _after_replay(
    request: Request, services: pages.Services, job_id: str | None, replayed: int
) -> HTMLResponse:
    context = await pages.dead_letters(services, job_id, None)
    noun = "task" if replayed == 1 else "tasks"
    message = f"Replayed {replayed} {noun}." if replayed else "Nothing to replay: already done."
    return _render(request, "_dead_letters.html", context | {"message": message})


@router.post("/dead-letters/{job_id}/{task_id}/replay")
async def replay_one(
    request: Request,
    job_id: str,
    task_id: str,
    services: Services,
    filter_job: Annotated[JobFilter, Query(alias="job_id")] = None,
) -> HTMLResponse:
    """Replay one dead-lettered task; answers the refreshed list."""
    if not _from_htmx(request):
        return _problem(request, 400, "Not sent by the dashboard", "Use the Replay button.")
    jobs: JobService = services.jobs
    try:
        replayed = await jobs.replay_dead_letter(job_id, task_id)
    except JobNotFound as exc:
        return _problem(request, 404, "Job not found", f"There is no job {exc}.")
    return await _after_replay(request, services, filter_job or None, replayed)


@router.post("/dead-letters/replay")
async def replay_all(
    request: Request, services: Services, job_id: JobFilter = None
) -> HTMLResponse:
    """Replay every dead letter (of one job when ``job_id`` is given), up to the API's limit."""
    if not _from_htmx(request):
        return _problem(request, 400, "Not sent by the dashboard", "Use the Replay all button.")
    try:
        replayed = await services.jobs.replay_dead_letters(job_id or None, None)
    except JobNotFound as exc:
        return _problem(request, 404, "Job not found", f"There is no job {exc}.")
    return await _after_replay(request, services, job_id or None, replayed)


@router.get("/hosts")
async def hosts(request: Request, services: Services) -> HTMLResponse:
    return await _page(request, "hosts.html", pages.paused_hosts(services))


@router.get("/fragments/hosts")
async def hosts_fragment(request: Request, services: Services) -> HTMLResponse:
    return await _page(request, "_hosts.html", pages.paused_hosts(services))


@router.get("/static/{path:path}", response_class=Response)
async def static_file(request: Request, path: str) -> Response:
    """The vendored libraries, the stylesheet and the chart script (StaticFiles: ETag and
    Last-Modified, 304s, no path outside the folder)."""
    static: StaticFiles = request.app.state.ui_static
    return await static.get_response(path, request.scope)
