"""What the monitor pages show: the monitors of the tenant the viewer sees (their last and
next check), one monitor's recent checks, and one check's pages that are not ``same`` with
their diffs side by side. Reads the dispatcher's monitor services, never its HTTP API."""

from __future__ import annotations

from dataclasses import dataclass

from scrapejobs_dispatcher.monitors.check_runner import CheckRunner
from scrapejobs_dispatcher.monitors.monitor_service import Monitors
from scrapejobs_dispatcher.ui import monitor_presenters as shown
from scrapejobs_dispatcher.ui.pages import Context
from scrapejobs_shared.domain.clock import Clock
from scrapejobs_shared.domain.monitor_checks import PageStatus
from scrapejobs_shared.domain.tenancy import Caller

MONITORS_PER_PAGE = 25
CHECKS_SHOWN = 20
PAGES_PER_PAGE = 20


@dataclass(frozen=True, slots=True)
class MonitorServices:
    monitors: Monitors
    runner: CheckRunner
    clock: Clock
    viewer: Caller
    tenant: str  # whose monitors: a member's own; an admin's filter, else its own

    def key(self, *parts: object) -> tuple[object, ...]:
        return ("monitors", self.tenant, *parts)


async def monitor_list(services: MonitorServices, page_token: str | None) -> Context:
    monitors, token = await services.monitors.listed(services.tenant, MONITORS_PER_PAGE, page_token)
    return {
        "monitors": [shown.MonitorRow.of(m) for m in monitors],
        "tenant": services.tenant,
        "page_token": page_token,
        "next_page_token": token,
        "generated_at": f"{services.clock():%H:%M:%S} UTC",
    }


async def monitor_page(services: MonitorServices, monitor_id: str) -> Context:
    """A monitor and its recent checks (``MonitorNotFound`` when it is not the tenant's)."""
    monitor = await services.monitors.get(services.tenant, monitor_id)
    checks, _ = await services.runner.listed(services.tenant, monitor_id, CHECKS_SHOWN, None)
    return {
        "monitor": shown.MonitorRow.of(monitor),
        "checks": [shown.CheckRow.of(c) for c in checks],
        "generated_at": f"{services.clock():%H:%M:%S} UTC",
    }


async def check_page(
    services: MonitorServices,
    monitor_id: str,
    check_id: str,
    status: PageStatus | None,
    page_token: str | None,
) -> Context:
    """A check (compared first if its job has ended) and a page of its pages, those that
    changed first, each with its diff side by side."""
    monitor = await services.monitors.get(services.tenant, monitor_id)
    check, pages, token = await services.runner.pages(
        services.tenant, monitor_id, check_id, status, PAGES_PER_PAGE, page_token
    )
    return {
        "monitor": shown.MonitorRow.of(monitor),
        "check": shown.CheckRow.of(check),
        "pages": [shown.PageRow.of(p) for p in pages],
        "status": status.value if status is not None else "",
        "statuses": shown.STATUSES,
        "page_token": page_token,
        "next_page_token": token,
    }
