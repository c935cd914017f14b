"""What routes are given: each object the composition root (``main.py``) puts on
``app.state``, as a typed FastAPI dependency. A route declares ``jobs: JobsDep`` and never
reads ``request.app.state`` itself, so tests can override any of them in one place
(``app.dependency_overrides``). The one exception is the dashboard's rendering: the
templates and the few-seconds figure cache ``ui.install`` puts on ``app.state`` are read by
its page helpers (``ui/routes.py``), which also render the error pages of exception handlers,
where there are no dependencies."""

from __future__ import annotations

from typing import Annotated, Any

from fastapi import Depends, Request

from scrapejobs_dispatcher.jobs.job_export import JobExport
from scrapejobs_dispatcher.jobs.job_files import JobFiles
from scrapejobs_dispatcher.jobs.job_service import JobService
from scrapejobs_dispatcher.jobs.recovery import Recovery
from scrapejobs_dispatcher.monitors.change_tracking import ChangeTracker
from scrapejobs_dispatcher.monitors.check_runner import CheckRunner
from scrapejobs_dispatcher.monitors.monitor_service import Monitors
from scrapejobs_dispatcher.monitors.monitor_tick import MonitorTick
from scrapejobs_dispatcher.search.web_search import WebSearch
from scrapejobs_dispatcher.submission.idempotent import IdempotentSubmission
from scrapejobs_dispatcher.submission.sync_scrape import SyncScrape
from scrapejobs_dispatcher.system_health import SystemHealth
from scrapejobs_dispatcher.tenants.keyring import Keyring
from scrapejobs_dispatcher.tenants.tenant_directory import TenantDirectory
from scrapejobs_dispatcher.tenants.tenant_quotas import Quotas
from scrapejobs_dispatcher.tenants.usage import Usage
from scrapejobs_dispatcher.uploads.upload_service import UploadService
from scrapejobs_shared.politeness.host_gate import HostGate
from scrapejobs_shared.ports.workers import WorkerDirectory


def app_state(name: str) -> Any:
    """A dependency that reads ``app.state.<name>``: a coroutine function, so FastAPI calls it
    on the event loop (a plain function is run in its thread pool, a hop per dependency per
    request: a fifth of a status poll's time in the dispatcher's profile, bench/README.md)."""

    async def read(request: Request) -> Any:
        return getattr(request.app.state, name)

    read.__name__ = f"app_state_{name}"
    return read


JobsDep = Annotated[JobService, Depends(app_state("jobs"))]
RecoveryDep = Annotated[Recovery, Depends(app_state("recovery"))]
ExportDep = Annotated[JobExport, Depends(app_state("export"))]
FilesDep = Annotated[JobFiles, Depends(app_state("job_files"))]
SubmissionsDep = Annotated[IdempotentSubmission, Depends(app_state("idempotent_submissions"))]
ScrapeDep = Annotated[SyncScrape, Depends(app_state("sync_scrape"))]
UploadsDep = Annotated[UploadService, Depends(app_state("uploads"))]
SystemHealthDep = Annotated[SystemHealth, Depends(app_state("system_health"))]
MonitorsDep = Annotated[Monitors, Depends(app_state("monitors"))]
CheckRunnerDep = Annotated[CheckRunner, Depends(app_state("check_runner"))]
MonitorTickDep = Annotated[MonitorTick, Depends(app_state("monitor_tick"))]
ChangeTrackerDep = Annotated[ChangeTracker, Depends(app_state("change_tracker"))]
UsageDep = Annotated[Usage, Depends(app_state("usage"))]
WorkersDep = Annotated[WorkerDirectory, Depends(app_state("workers"))]
HostGateDep = Annotated[HostGate, Depends(app_state("host_gate"))]
ReconcileAfterDep = Annotated[float, Depends(app_state("reconcile_after_s"))]
KeyringDep = Annotated[Keyring, Depends(app_state("keyring"))]
QuotasDep = Annotated[Quotas, Depends(app_state("quotas"))]
TenantsDep = Annotated[TenantDirectory, Depends(app_state("tenant_directory"))]
WebSearchDep = Annotated[WebSearch, Depends(app_state("web_search"))]
