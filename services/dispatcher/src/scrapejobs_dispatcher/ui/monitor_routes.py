"""The dashboard's monitor pages under /ui: the monitors, one monitor's checks, a check's
pages with their diffs side by side, and the pause, resume and run-now buttons (htmx, same
origin only). Behind the same access as every dashboard page (access.py)."""

from __future__ import annotations

from functools import partial
from typing import Annotated

from fastapi import Depends, Path, Query, Request
from fastapi.responses import HTMLResponse
from starlette.responses import Response

from scrapejobs_dispatcher.dependencies import CheckRunnerDep, MonitorsDep
from scrapejobs_dispatcher.monitors.monitor_service import MonitorConflict, MonitorNotFound
from scrapejobs_dispatcher.routes.monitors import CHECK_ID, MONITOR_ID
from scrapejobs_dispatcher.ui import monitor_pages, responses
from scrapejobs_dispatcher.ui.access import SAME_ORIGIN, TenantFilter, require_viewer
from scrapejobs_dispatcher.ui.dashboard_router import PageToken, dashboard_router
from scrapejobs_dispatcher.ui.figure_cache import FigureCache
from scrapejobs_shared.domain.clock import utc_now
from scrapejobs_shared.domain.monitor_checks import PageStatus
from scrapejobs_shared.domain.monitors import MonitorStatus
from scrapejobs_shared.domain.tenancy import Caller
from scrapejobs_shared.ports.dependency_unavailable import DependencyUnavailable

router = dashboard_router()


async def _monitor_services(
    monitors: MonitorsDep,
    runner: CheckRunnerDep,
    viewer: Annotated[Caller, Depends(require_viewer)],
    tenant: TenantFilter = None,
) -> monitor_pages.MonitorServices:
    """Whose monitors: a member's tenant's; an admin's filter, else its own tenant's."""
    scope = viewer.scope(tenant or None) or viewer.tenant
    return monitor_pages.MonitorServices(monitors, runner, utc_now, viewer, scope)


MonitorServices = Annotated[monitor_pages.MonitorServices, Depends(_monitor_services)]
MonitorIdPath = Annotated[str, Path(pattern=MONITOR_ID)]
CheckIdPath = Annotated[str, Path(pattern=CHECK_ID)]


@router.get("/monitors")
@router.get("/fragments/monitors")
async def monitors_page(
    request: Request, services: MonitorServices, page_token: PageToken = None
) -> HTMLResponse:
    build = partial(monitor_pages.monitor_list, services, page_token)
    template = responses.page_or_fragment(request, "monitors")
    return await responses.page(request, template, services.key("list", page_token), build)


@router.get("/monitors/{monitor_id}")
async def monitor_page(
    request: Request, monitor_id: MonitorIdPath, services: MonitorServices
) -> HTMLResponse:
    build = partial(monitor_pages.monitor_page, services, monitor_id)
    return await responses.page(request, "monitor.html", services.key(monitor_id), build)


@router.get("/monitors/{monitor_id}/checks/{check_id}")
async def check_page(
    request: Request,
    monitor_id: MonitorIdPath,
    check_id: CheckIdPath,
    services: MonitorServices,
    status: PageStatus | None = None,
    page_token: Annotated[str | None, Query(pattern=r"^[0-9a-f]{32}$")] = None,
) -> HTMLResponse:
    build = partial(monitor_pages.check_page, services, monitor_id, check_id, status, page_token)
    key = services.key(monitor_id, check_id, status, page_token)
    return await responses.page(request, "check.html", key, build)


@router.post("/monitors/{monitor_id}/{action}", dependencies=SAME_ORIGIN)
async def monitor_action(
    request: Request,
    monitor_id: MonitorIdPath,
    action: Annotated[str, Path(pattern="^(pause|resume|run)$")],
    services: MonitorServices,
) -> Response:
    """Pause, resume or run a monitor now (htmx only). Run goes to the new check's page;
    pause and resume answer the refreshed list."""
    if not responses.from_htmx(request):
        return responses.problem(
            request, 400, "Not sent by the dashboard", "Use the monitor's buttons."
        )
    try:
        if action == "run":
            check = await services.runner.start(services.tenant, monitor_id)
            target = f"/ui/monitors/{monitor_id}/checks/{check.id}"
            return Response(status_code=204, headers={"HX-Redirect": target})
        status = MonitorStatus.PAUSED if action == "pause" else MonitorStatus.ACTIVE
        changed = await services.monitors.set_status(services.tenant, monitor_id, status)
        cache: FigureCache = request.app.state.ui_figures
        cache.forget(services.key("list", None))
        context = await monitor_pages.monitor_list(services, None)
        message = f"{changed.name}: {'paused' if action == 'pause' else 'resumed'}."
        return responses.render(request, "_monitors.html", context | {"message": message})
    except MonitorNotFound:
        return responses.problem(request, 404, "Monitor not found", "There is no such monitor.")
    except MonitorConflict:
        return responses.problem(
            request, 409, "Changed meanwhile", "The monitor changed: try again."
        )
    except DependencyUnavailable as exc:
        return responses.unavailable(request, exc)
