"""The dashboard's routes under /ui, behind the API's authentication (or, in api_key mode, a
signed-in session: access.py): full pages, the fragments htmx polls to keep them live, the
replay actions, and the sign-in form. Handlers only pick a page builder and a template; the
builders (pages.py) read the service objects."""

from __future__ import annotations

import math
from collections.abc import Awaitable, Callable, Hashable
from functools import partial
from typing import Annotated, Any
from urllib.parse import parse_qs, quote

from fastapi import APIRouter, Depends, FastAPI, Query, Request
from fastapi.responses import HTMLResponse, RedirectResponse
from fastapi.staticfiles import StaticFiles
from starlette.responses import Response

from scrapejobs_dispatcher.dependencies import (
    FilesDep,
    HostGateDep,
    JobsDep,
    RecoveryDep,
    SystemHealthDep,
    TenantsDep,
    WorkersDep,
    app_state,
)
from scrapejobs_dispatcher.jobs.job_errors import JobNotFound
from scrapejobs_dispatcher.tenants.authentication import Authenticator
from scrapejobs_dispatcher.ui import pages
from scrapejobs_dispatcher.ui.access import (
    SAME_ORIGIN,
    CrossSiteRequest,
    SignInRequired,
    TenantFilter,
    require_viewer,
)
from scrapejobs_dispatcher.ui.dashboard_router import PageToken, dashboard_router
from scrapejobs_dispatcher.ui.figure_cache import FigureCache
from scrapejobs_dispatcher.ui.responses import (
    from_htmx,
    page,
    page_or_fragment,
    problem,
    render,
    unavailable,
)
from scrapejobs_dispatcher.ui.sessions import (
    COOKIE,
    COOKIE_PATH,
    MAX_FORM_BYTES,
    DashboardSessions,
    SignInAttempts,
    client_address,
    is_secure,
)
from scrapejobs_shared.domain.clock import utc_now
from scrapejobs_shared.domain.tenancy import Caller
from scrapejobs_shared.errors import NotFound
from scrapejobs_shared.ports.dependency_unavailable import DependencyUnavailable

router = dashboard_router()
# what anyone may open: the sign-in form and the static files
sign_in_router = APIRouter(
    prefix="/ui", include_in_schema=False, default_response_class=HTMLResponse
)
SIGN_IN = "/ui/sign-in"

JobFilter = Annotated[str | None, Query(max_length=64, pattern=r"^[A-Za-z0-9_\-]*$")]


async def _services(  # a coroutine function: FastAPI runs it on the event loop
    jobs: JobsDep,
    recovery: RecoveryDep,
    system: SystemHealthDep,
    host_gate: HostGateDep,
    workers: WorkersDep,
    tenants: TenantsDep,
    viewer: Annotated[Caller, Depends(require_viewer)],
    tenant: TenantFilter = None,
) -> pages.Services:
    """What the pages read, for who is looking (an admin may list one ``tenant``'s jobs)."""
    scope = viewer.scope(tenant or None)
    return pages.Services(
        jobs, recovery, system, host_gate, workers, tenants, utc_now, viewer, scope
    )


Services = Annotated[pages.Services, Depends(_services)]
StaticDep = Annotated[StaticFiles, Depends(app_state("ui_static"))]
SessionsDep = Annotated[DashboardSessions, Depends(app_state("dashboard_sessions"))]


def dead_letters_key(job_id: str | None, page_token: str | None) -> tuple[Hashable, ...]:
    return ("dead_letters", job_id or None, page_token)


def _known_job_id(job_id: str) -> bool:
    return ":" not in job_id and 0 < len(job_id) <= 128


@router.get("")
async def home(request: Request, services: Services, page_token: PageToken = None) -> HTMLResponse:
    async def build() -> dict[str, Any]:
        live = await pages.overview(services, page_token)
        return live | await pages.history(services)

    return await page(request, "home.html", services.key("home", page_token), build)


@router.get("/fragments/overview")
async def overview_fragment(
    request: Request, services: Services, page_token: PageToken = None
) -> HTMLResponse:
    build = partial(pages.overview, services, page_token)
    return await page(request, "_overview.html", services.key("overview", page_token), build)


@router.get("/fragments/history")
async def history_fragment(request: Request, services: Services) -> HTMLResponse:
    build = partial(pages.history, services)
    return await page(request, "_history.html", services.key("history"), build)


@router.get("/jobs/{job_id}")
async def job(
    request: Request, job_id: str, services: Services, page_token: PageToken = None
) -> HTMLResponse:
    if not _known_job_id(job_id):
        return problem(request, 404, "Job not found", "There is no such job.")
    build = partial(pages.job_page, services, job_id, page_token)
    return await page(request, "job.html", services.key("job", job_id, page_token), build)


@router.get("/jobs/{job_id}/files/{task_id}/{name}")
async def job_file(
    request: Request,
    job_id: str,
    task_id: str,
    name: str,
    files: FilesDep,
    viewer: Annotated[Caller, Depends(require_viewer)],
) -> Response:
    """A page's screenshot for the dashboard (its session's tenant's only, as the API's)."""
    try:
        found = await files.file(job_id, task_id, name, viewer)
    except NotFound:
        return problem(request, 404, "File not found", "There is no such file.")
    headers = {"Cache-Control": "private, max-age=3600", "X-Content-Type-Options": "nosniff"}
    return Response(found.body, media_type=found.content_type, headers=headers)


@router.get("/fragments/jobs/{job_id}")
async def job_fragment(request: Request, job_id: str, services: Services) -> HTMLResponse:
    if not _known_job_id(job_id):
        return problem(request, 404, "Job not found", "There is no such job.")
    build = partial(pages.job_summary, services, job_id)
    return await page(request, "_job_summary.html", services.key("job_summary", job_id), build)


@router.get("/dead-letters")
@router.get("/fragments/dead-letters")
async def dead_letters(
    request: Request, services: Services, job_id: JobFilter = None, page_token: PageToken = None
) -> HTMLResponse:
    build = partial(pages.dead_letters, services, job_id or None, page_token)
    template = page_or_fragment(request, "dead_letters")
    return await page(request, template, services.key(*dead_letters_key(job_id, page_token)), build)


async def _after_replay(
    request: Request, services: pages.Services, job_id: str | None, replayed: int
) -> HTMLResponse:
    cache: FigureCache = request.app.state.ui_figures
    cache.forget(services.key(*dead_letters_key(job_id, None)))
    context = await pages.dead_letters(services, job_id, None)
    noun = "task" if replayed == 1 else "tasks"
    message = f"Replayed {replayed} {noun}." if replayed else "Nothing to replay: already done."
    return render(request, "_dead_letters.html", context | {"message": message})


@router.post("/dead-letters/{job_id}/{task_id}/replay", dependencies=SAME_ORIGIN)
async def replay_one(
    request: Request,
    job_id: str,
    task_id: str,
    services: Services,
    filter_job: Annotated[JobFilter, Query(alias="job_id")] = None,
) -> HTMLResponse:
    """Replay one dead-lettered task; answers the refreshed list."""
    if not from_htmx(request):
        return problem(request, 400, "Not sent by the dashboard", "Use the Replay button.")
    try:
        replayed = await services.recovery.replay_dead_letter(job_id, task_id, services.viewer)
        return await _after_replay(request, services, filter_job or None, replayed)
    except JobNotFound as exc:
        return problem(request, 404, "Job not found", f"There is no job {exc}.")
    except DependencyUnavailable as exc:
        return unavailable(request, exc)


@router.post("/dead-letters/replay", dependencies=SAME_ORIGIN)
async def replay_all(
    request: Request, services: Services, job_id: JobFilter = None
) -> HTMLResponse:
    """Replay every dead letter (of one job when ``job_id`` is given), up to the API's limit."""
    if not from_htmx(request):
        return problem(request, 400, "Not sent by the dashboard", "Use the Replay all button.")
    try:
        replayed = await services.recovery.replay_dead_letters(
            job_id or None, None, services.viewer
        )
        return await _after_replay(request, services, job_id or None, replayed)
    except JobNotFound as exc:
        return problem(request, 404, "Job not found", f"There is no job {exc}.")
    except DependencyUnavailable as exc:
        return unavailable(request, exc)


@router.get("/workers")
@router.get("/fragments/workers")
async def workers(request: Request, services: Services) -> HTMLResponse:
    return await _admin_page(request, services, "workers", pages.workers)


@router.get("/tenants")
async def tenants(request: Request, services: Services) -> HTMLResponse:
    return await _admin_page(request, services, "tenants", pages.tenants)


@router.get("/hosts")
@router.get("/fragments/hosts")
async def hosts(request: Request, services: Services) -> HTMLResponse:
    return await _admin_page(request, services, "hosts", pages.paused_hosts)


async def _admin_page(
    request: Request,
    services: pages.Services,
    name: str,
    view: Callable[[pages.Services], Awaitable[pages.Context]],
) -> HTMLResponse:
    """The deployment's own views (hosts: every tenant's sites; workers; tenants) are an
    admin's."""
    if not services.viewer.admin:
        detail = "Hosts (every tenant's sites), workers and tenants are shown to admins only."
        return problem(request, 403, "Admins only", detail)
    return await page(request, page_or_fragment(request, name), name, partial(view, services))


@sign_in_router.get("/static/{path:path}", response_class=Response)
async def static_file(request: Request, path: str, static: StaticDep) -> Response:
    """The vendored libraries, the stylesheet and the chart script (StaticFiles: ETag and
    Last-Modified, 304s, no path outside the folder): no data, so the sign-in form can use
    them before anyone has signed in."""
    return await static.get_response(path, request.scope)


def _next_page(value: str | None) -> str:
    """Where to go after signing in: a dashboard path, never another site."""
    if value and value.startswith("/ui") and not value.startswith(("//", "/\\")):
        return value[:2048]
    return "/ui"


async def _bounded_body(request: Request, limit: int) -> bytes | None:
    """The request's body, or None as soon as it passes ``limit`` bytes (not read further)."""
    body = b""
    async for chunk in request.stream():
        body += chunk
        if len(body) > limit:
            return None
    return body


def _sign_in_page(
    request: Request, next_page: str, message: str | None, status: int
) -> HTMLResponse:
    context = {"next_page": next_page, "message": message}
    return render(request, "sign_in.html", context, status)


def _signs_in(request: Request) -> bool:
    authenticator: Authenticator = request.app.state.authenticator
    return authenticator.mode == "api_key"


@sign_in_router.get("/sign-in", response_model=None)
async def sign_in_form(
    request: Request, next: Annotated[str | None, Query(max_length=2048)] = None
) -> HTMLResponse | RedirectResponse:
    if not _signs_in(request):  # iam or none: nothing to sign in to here
        return RedirectResponse("/ui", status_code=303)
    return _sign_in_page(request, _next_page(next), None, 200)


@sign_in_router.post("/sign-in", dependencies=SAME_ORIGIN, response_model=None)
async def sign_in(request: Request, sessions: SessionsDep) -> HTMLResponse | RedirectResponse:
    """The form's API key → a session cookie and the page asked for; a wrong key → the form
    again with a message (401)."""
    if not _signs_in(request):
        return RedirectResponse("/ui", status_code=303)
    attempts: SignInAttempts = request.app.state.sign_in_attempts
    client = client_address(request.client.host if request.client else None, request.headers)
    wait_s = attempts.retry_after_s(client)
    if wait_s > 0:
        page = _sign_in_page(request, "/ui", "Too many sign-in attempts: wait a minute.", 429)
        page.headers["Retry-After"] = str(max(1, math.ceil(wait_s)))
        return page
    body = await _bounded_body(request, MAX_FORM_BYTES)
    if body is None:
        return _sign_in_page(request, "/ui", "That form is too large.", 413)
    form = parse_qs(body.decode("utf-8", "replace"), max_num_fields=4)
    key = (form.get("api_key") or [""])[0]
    next_page = _next_page((form.get("next") or ["/ui"])[0])
    token = await sessions.sign_in(key)
    if token is None:
        return _sign_in_page(request, next_page, "That API key is not valid.", 401)
    response = RedirectResponse(next_page, status_code=303)
    response.set_cookie(
        COOKIE,
        token,
        max_age=sessions.lifetime_s,
        path=COOKIE_PATH,
        secure=is_secure(request.url.scheme, request.headers),
        httponly=True,
        samesite="strict",
    )
    return response


@sign_in_router.post("/sign-out", dependencies=SAME_ORIGIN)
async def sign_out(request: Request, sessions: SessionsDep) -> RedirectResponse:
    await sessions.sign_out(request.cookies.get(COOKIE))  # the cookie is dead everywhere
    response = RedirectResponse(SIGN_IN, status_code=303)
    response.delete_cookie(
        COOKIE,
        path=COOKIE_PATH,
        secure=is_secure(request.url.scheme, request.headers),
        httponly=True,
        samesite="strict",
    )
    return response


def install_refusals(app: FastAPI) -> None:
    """A dashboard refusal as a person (or htmx) should see it."""

    async def sign_in_required(request: Request, _: Exception) -> Response:
        if from_htmx(request):  # a poll after the session ended: htmx follows HX-Redirect
            return Response(status_code=401, headers={"HX-Redirect": SIGN_IN})
        if request.method == "GET":
            target = request.url.path + (f"?{request.url.query}" if request.url.query else "")
            return RedirectResponse(f"{SIGN_IN}?next={quote(target)}", status_code=303)
        return problem(request, 401, "Sign in first", "Your session has ended: sign in again.")

    async def cross_site(request: Request, _: Exception) -> Response:
        detail = "This request came from another site's page, so it was not carried out."
        return problem(request, 403, "Refused", detail)

    app.add_exception_handler(SignInRequired, sign_in_required)
    app.add_exception_handler(CrossSiteRequest, cross_site)
