"""How the dashboard answers: a page or fragment rendered from a template with its security
headers, an error as a page (or, for htmx, a fragment shown in place), a dependency outage as
a banner, and pages built through the few-seconds figure cache."""

from __future__ import annotations

import math
from collections.abc import Awaitable, Callable, Hashable
from typing import Any

from fastapi import Request
from fastapi.responses import HTMLResponse
from fastapi.templating import Jinja2Templates

from scrapejobs_dispatcher.jobs.job_errors import JobNotFound
from scrapejobs_dispatcher.monitors.check_runner import CheckNotFound
from scrapejobs_dispatcher.monitors.monitor_service import MonitorNotFound
from scrapejobs_dispatcher.ui import pages
from scrapejobs_dispatcher.ui.figure_cache import FigureCache
from scrapejobs_shared.adapters.page_token import InvalidPageToken
from scrapejobs_shared.observability.store_ops import counting
from scrapejobs_shared.ports.dependency_unavailable import DependencyUnavailable


def render(
    request: Request, template: str, context: dict[str, Any], status: int = 200
) -> HTMLResponse:
    templates: Jinja2Templates = request.app.state.ui_templates
    signed_in = getattr(request.state, "signed_in", False)
    response: HTMLResponse = templates.TemplateResponse(
        request, template, context | {"signed_in": signed_in}, status_code=status
    )
    response.headers.update(PAGE_HEADERS)
    return response


# Every dashboard page: scripts only from /ui/static (no inline script, no eval), no other
# origin may frame it (clickjacking an action button), no plugin, no <base> rewrite, forms post
# here only. Inline styles stay allowed (uPlot and htmx set them; they run no code).
PAGE_HEADERS = {
    "Content-Security-Policy": (
        "default-src 'self'; script-src 'self'; style-src 'self' 'unsafe-inline'; "
        "img-src 'self' data:; connect-src 'self'; object-src 'none'; base-uri 'none'; "
        "form-action 'self'; frame-ancestors 'none'"
    ),
    "X-Frame-Options": "DENY",
    "X-Content-Type-Options": "nosniff",
    "Referrer-Policy": "same-origin",
}


def problem(request: Request, status: int, title: str, detail: str) -> HTMLResponse:
    """An error as a page (or, for htmx, a fragment it shows in place)."""
    context = {"title": title, "detail": detail, "status": status}
    template = "_problem.html" if from_htmx(request) else "problem.html"
    return render(request, template, context, status)


def unavailable(request: Request, outage: DependencyUnavailable) -> HTMLResponse:
    """A banner in place of the figures while a dependency does not answer; the polls go on,
    and the figures come back with the first poll after it answers again."""
    detail = f"{outage}. The figures come back by themselves once it answers again."
    banner = problem(request, 503, f"{outage.dependency} is not answering", detail)
    banner.headers["Retry-After"] = str(max(1, math.ceil(outage.timeout_s)))
    return banner


async def page(
    request: Request,
    template: str,
    key: Hashable,
    build: Callable[[], Awaitable[pages.Context]],
) -> HTMLResponse:
    """Render ``template`` with what ``build`` gives (for htmx's polls, kept a few seconds
    per instance under ``key``: figure_cache.py), or the problem page an unknown job or a bad
    page token calls for. The Firestore documents the request read: ``X-Firestore-Reads``."""
    cache: FigureCache = request.app.state.ui_figures
    with counting() as ops:
        try:
            polled = from_htmx(request)  # a person's own load is computed now
            context = await (cache.get(key, build) if polled else cache.compute(key, build))
        except JobNotFound as exc:
            return problem(request, 404, "Job not found", f"There is no job {exc}.")
        except InvalidPageToken as exc:
            return problem(request, 400, "Bad page link", f"This page link is not valid: {exc}")
        except MonitorNotFound:
            return problem(request, 404, "Monitor not found", "There is no such monitor.")
        except CheckNotFound:
            return problem(request, 404, "Check not found", "There is no such check.")
        except DependencyUnavailable as exc:
            return unavailable(request, exc)
    response = render(request, template, context)
    response.headers["X-Firestore-Reads"] = str(ops.reads)
    return response


def page_or_fragment(request: Request, name: str) -> str:
    """The template of a view served at two paths: ``name.html``, the page, and ``_name.html``,
    the fragment htmx polls at ``/ui/fragments/…``."""
    fragment = request.url.path.startswith("/ui/fragments/")
    return f"_{name}.html" if fragment else f"{name}.html"


def from_htmx(request: Request) -> bool:
    """Actions are sent by htmx, which sets ``HX-Request``: a cross-site form cannot set a
    header without a CORS preflight, so this also keeps other sites from replaying tasks."""
    return request.headers.get("hx-request") == "true"
