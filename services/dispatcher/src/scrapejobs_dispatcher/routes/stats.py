"""Monitoring: /v1/stats, /v1/stats/history, /v1/health."""

from __future__ import annotations

from typing import Annotated

from fastapi import Query
from fastapi.responses import JSONResponse

from scrapejobs_dispatcher.dependencies import SystemHealthDep, WorkersDep
from scrapejobs_dispatcher.jobs.stats_views import (
    HealthView,
    HistoryView,
    HourView,
    ProxyEntry,
    StatsView,
)
from scrapejobs_dispatcher.routes.jobs import ERRORS, TenantFilter
from scrapejobs_dispatcher.routes.native_router import native_router
from scrapejobs_dispatcher.routes.workers import MAX_LISTED
from scrapejobs_dispatcher.system_health import MAX_HISTORY_HOURS, Level, Window
from scrapejobs_dispatcher.tenants.authentication import CallerDep, require_caller
from scrapejobs_shared.domain.clock import utc_now
from scrapejobs_shared.domain.workers import SEEN_WITHIN, proxy_totals

router = native_router("/v1", "monitoring", require_caller)


@router.get("/stats", response_model=StatsView, responses=ERRORS)
async def stats(
    system: SystemHealthDep,
    workers: WorkersDep,
    caller: CallerDep,
    tenant: TenantFilter = None,
    window: Annotated[Window, Query(description="5m, 1h or 24h (whole slots or hours)")] = "1h",
) -> StatsView:
    """Tasks by status, jobs by status, throughput, service and fetch times, error rate, the
    oldest queued work and the hosts paused now: of the caller's tenant's jobs (an admin's: every
    tenant's, or ``tenant``'s, and each proxy's counts over the live worker processes). Costs
    O(slots x shards) reads (and one a live worker process for an admin), never O(tasks)."""
    report = await system.stats(window, caller.scope(tenant))
    if not caller.admin:  # hosts and proxies are every tenant's
        return StatsView.of(report.without_hosts())
    view = StatsView.of(report)
    seen = await workers.seen_since(utc_now() - SEEN_WITHIN, MAX_LISTED)
    view.proxies = [ProxyEntry.of(use) for use in proxy_totals(seen)]
    return view


@router.get("/stats/history", response_model=HistoryView, responses=ERRORS)
async def history(
    system: SystemHealthDep,
    caller: CallerDep,
    tenant: TenantFilter = None,
    hours: Annotated[int, Query(ge=1, le=MAX_HISTORY_HOURS, description="Hours back")] = 24,
) -> HistoryView:
    """One row per hour, oldest first, the current (partial) hour last."""
    rows = await system.history(hours, caller.scope(tenant))
    return HistoryView(history=[HourView.of(row) for row in rows])


@router.get(
    "/health",
    response_model=HealthView,
    responses={**ERRORS, 503: {"model": HealthView, "description": "UNHEALTHY"}},
)
async def health(system: SystemHealthDep, caller: CallerDep) -> JSONResponse:
    """HEALTHY or DEGRADED (200), UNHEALTHY (503), with the reasons and every check (the
    hosts paused are named to admins only: they are every tenant's sites)."""
    result = await system.health()
    result = result if caller.admin else result.for_member()
    status = 503 if result.status is Level.UNHEALTHY else 200
    return JSONResponse(HealthView.of(result).model_dump(mode="json"), status_code=status)
