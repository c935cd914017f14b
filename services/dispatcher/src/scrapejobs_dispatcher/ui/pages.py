"""What each dashboard page shows: reads the dispatcher's own service objects (never its HTTP
API) and returns a template context built by the presenters."""

from __future__ import annotations

import asyncio
from collections.abc import Hashable
from dataclasses import dataclass
from typing import Any

from scrapejobs_dispatcher.jobs.job_errors import JobNotFound
from scrapejobs_dispatcher.jobs.job_service import JobService, JobView
from scrapejobs_dispatcher.jobs.recovery import Recovery
from scrapejobs_dispatcher.system_health import SystemHealth
from scrapejobs_dispatcher.tenants.tenant_directory import TenantDirectory
from scrapejobs_dispatcher.ui import presenters
from scrapejobs_dispatcher.ui.tenant_presenters import tenant_row
from scrapejobs_shared.domain.clock import Clock
from scrapejobs_shared.domain.tenancy import Caller
from scrapejobs_shared.domain.workers import SEEN_WITHIN
from scrapejobs_shared.politeness.host_gate import HostGate
from scrapejobs_shared.ports.workers import WorkerDirectory

JOBS_PER_PAGE = 10
RESULTS_PER_PAGE = 25
ERRORS_SHOWN = 20
WEBHOOKS_SHOWN = 20
DEAD_LETTERS_PER_PAGE = 50
PAUSED_SHOWN = 200
WORKERS_SHOWN = 200
HISTORY_HOURS = 24

Context = dict[str, Any]


@dataclass(frozen=True, slots=True)
class Services:
    """The service objects the composition root put on ``app.state``."""

    jobs: JobService
    recovery: Recovery
    system: SystemHealth
    host_gate: HostGate
    workers: WorkerDirectory
    tenants: TenantDirectory
    clock: Clock
    viewer: Caller  # who is looking: a member sees its tenant's work, an admin every tenant's
    tenant: str | None = None  # the jobs listed: a member's own tenant; an admin's filter

    def key(self, *parts: Hashable) -> Hashable:
        """A figure-cache key for this viewer (figures of one tenant never serve another)."""
        return (self.viewer.admin, self.tenant, *parts)


async def overview(services: Services, page_token: str | None) -> Context:
    """Home, live part: health with its reasons, the 5-minute figures, jobs with progress."""
    (health, report), page = await asyncio.gather(
        services.system.health_and_stats(),  # one read of the 5-minute figures serves both
        services.jobs.list_jobs(None, JOBS_PER_PAGE, page_token, services.tenant),
    )
    if report is None or services.tenant is not None:
        # health could not read them (the page says why), or the figures are one tenant's
        report = await services.system.stats("5m", services.tenant)
    if not services.viewer.admin:  # the paused hosts are every tenant's sites
        health, report = health.for_member(), report.without_hosts()
    views = await asyncio.gather(*(_view_or_none(services, job.id) for job in page.items))
    now = services.clock()
    return {
        "health": presenters.health_panel(health),
        "tiles": presenters.live_tiles(report),
        "jobs": [presenters.JobRow.of(view, now) for view in views if view is not None],
        "page_token": page_token,
        "next_page_token": page.next_page_token,
        "generated_at": f"{now:%H:%M:%S} UTC",
        "tenant": services.tenant,
        "admin": services.viewer.admin,
        "filter": services.tenant if services.viewer.admin else None,  # an admin's tenant filter
    }


async def _view_or_none(services: Services, job_id: str) -> JobView | None:
    try:
        return await services.jobs.get(job_id, services.viewer)
    except JobNotFound:  # deleted (or expired) between the list and the read
        return None


async def history(services: Services) -> Context:
    """Home, charts: the last 24 hours, hour by hour (of the tenant the viewer sees)."""
    rows = await services.system.history(HISTORY_HOURS, services.tenant)
    return {
        "series": presenters.history_series(rows),
        "lines": presenters.history_lines(rows),
        "hours": HISTORY_HOURS,
    }


async def job_summary(services: Services, job_id: str) -> Context:
    """A job's status, counts and progress (``JobNotFound`` when there is no such job)."""
    view = await services.jobs.get(job_id, services.viewer)
    return {
        "job": presenters.JobRow.of(view, services.clock()),
        "counts": presenters.count_list(view.counts),
        "started": presenters.relative_text(view.job.started_at, services.clock()),
        "finished_at": presenters.relative_text(view.job.finished_at, services.clock()),
    }


async def job_page(services: Services, job_id: str, page_token: str | None) -> Context:
    """A job: its summary, a page of results, its failed and dead-lettered tasks."""
    summary = await job_summary(services, job_id)
    results, unsuccessful, deliveries = await asyncio.gather(
        services.jobs.results(job_id, RESULTS_PER_PAGE, page_token, services.viewer),
        services.recovery.unsuccessful(job_id, ERRORS_SHOWN, services.viewer),
        services.jobs.webhook_deliveries(job_id, services.viewer, WEBHOOKS_SHOWN),
    )
    now = services.clock()
    return summary | {
        "results": [presenters.result_row(task) for task in results.items],
        "errors": [presenters.result_row(task) for task in unsuccessful],
        "webhooks": [
            {
                "type": d.type,
                "state": d.state,
                "attempts": d.attempts,
                "last_status": d.last_status or presenters.DASH,
                "last_error": d.last_error or "",
                "updated": presenters.relative_text(d.updated_at, now),
            }
            for d in deliveries
        ],
        "page_token": page_token,
        "next_page_token": results.next_page_token,
    }


async def dead_letters(services: Services, job_id: str | None, page_token: str | None) -> Context:
    page = await services.recovery.dead_letters(
        job_id, None, DEAD_LETTERS_PER_PAGE, page_token, services.viewer
    )
    now = services.clock()
    return {
        "letters": [presenters.dead_letter_row(task, now) for task in page.items],
        "job_id": job_id,
        "page_token": page_token,
        "next_page_token": page.next_page_token,
        "generated_at": f"{now:%H:%M:%S} UTC",
    }


async def paused_hosts(services: Services) -> Context:
    now = services.clock()
    paused = await services.host_gate.paused(now, PAUSED_SHOWN)
    return {
        "hosts": [presenters.paused_row(p, now) for p in paused],
        "generated_at": f"{now:%H:%M:%S} UTC",
    }


async def workers(services: Services) -> Context:
    """Worker processes heard from in the last 5 minutes (one read per process)."""
    now = services.clock()
    seen = await services.workers.seen_since(now - SEEN_WITHIN, WORKERS_SHOWN)
    return {
        "workers": [presenters.worker_row(view, now) for view in seen],
        "generated_at": f"{now:%H:%M:%S} UTC",
    }


async def tenants(services: Services) -> Context:
    """Each tenant's day against its quota and the proxies its jobs go through."""
    now = services.clock()
    entries = await services.tenants.entries()
    return {
        "tenants": [tenant_row(entry) for entry in entries],
        "generated_at": f"{now:%H:%M:%S} UTC",
    }
