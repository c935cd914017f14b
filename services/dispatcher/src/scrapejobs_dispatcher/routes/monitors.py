"""REST resources: /v1/monitors (a tenant's monitors: created, listed, read, changed, paused,
resumed and deleted; another tenant's monitor is a 404)."""

from __future__ import annotations

from datetime import datetime
from typing import Annotated, Any, TypeVar

from fastapi import HTTPException, Path, Query, Response
from pydantic import BaseModel, Field
from starlette.convertors import register_url_convertor

from scrapejobs_dispatcher.dependencies import CheckRunnerDep, MonitorsDep
from scrapejobs_dispatcher.edge.record_view import RecordView
from scrapejobs_dispatcher.routes.jobs import ERRORS, JobIdSegment
from scrapejobs_dispatcher.routes.native_router import native_router
from scrapejobs_dispatcher.tenants.authentication import CallerDep
from scrapejobs_shared.domain.monitor_checks import (
    CheckStatus,
    PageStatus,
    Trigger,
)
from scrapejobs_shared.domain.monitors import (
    MonitorRecord,
    MonitorRequest,
    MonitorStatus,
    MonitorUpdate,
)

T = TypeVar("T")
router = native_router("/v1/monitors", "monitors")
# one segment with no ':', so /v1/monitors/{id}:pause is never the monitor "{id}:pause"
register_url_convertor("monitor_id", JobIdSegment())
MONITOR_ID = r"^mon_[0-9a-f]{32}$"
MonitorId = Annotated[str, Path(pattern=MONITOR_ID, description="The monitor's id")]
CHECK_ID = r"^chk_[0-9a-f]{32}$"
CheckId = Annotated[str, Path(pattern=CHECK_ID, description="The check's id")]


class MonitorView(MonitorRequest):
    """A monitor: what it was created with (a webhook's secret left out), and its state."""

    id: str
    created_at: datetime
    updated_at: datetime
    next_check_at: datetime | None = Field(description="None while paused")
    last_check_id: str | None
    last_check_at: datetime | None
    checks: int = Field(description="How many checks it started")

    @classmethod
    def of(cls, record: MonitorRecord) -> MonitorView:
        request = record.request.model_dump(mode="json", exclude_none=True)
        if "webhook" in request:
            request["webhook"].pop("secret", None)
        return cls.model_validate(
            {
                **request,
                "id": record.id,
                "created_at": record.created_at,
                "updated_at": record.updated_at,
                "next_check_at": record.next_check_at,
                "last_check_id": record.last_check_id,
                "last_check_at": record.last_check_at,
                "checks": record.checks,
            },
            strict=False,
        )


class CheckView(RecordView):
    """A check: an ordinary job (``job_id``), its pages compared with the previous check's."""

    id: str
    monitor_id: str
    status: CheckStatus = Field(
        description="queued, running, then completed, partial (some pages errored), failed "
        "or skipped_overlap (the previous check still ran: nothing was run)"
    )
    trigger: Trigger
    job_id: str | None
    created_at: datetime
    finished_at: datetime | None
    summary: dict[str, int] = Field(
        description="Once finished: total, and pages by status (same, new, changed, removed, error)"
    )
    error: str | None = Field(
        default=None,
        description="Why a failed check could not start (the tenant's quota spent, an option "
        "this deployment no longer serves)",
    )


class CheckPageView(RecordView):
    url: str
    status: PageStatus
    status_code: int | None
    diff: dict[str, Any] | None = Field(
        description="A changed page's: fields.<name> (previous, current; numbers: change, "
        "change_pct; lists: added, removed; held_back_by), text (a unified diff of the "
        "markdown), text_change (the share of lines changed)"
    )
    notify: bool = Field(description="Whether the change passed the monitor's rules")
    held_back_by: list[str] = Field(description="The rules that held a change back")
    error: str | None


class CheckList(BaseModel):
    checks: list[CheckView]
    next_page_token: str | None


class CheckPages(BaseModel):
    check: CheckView
    pages: list[CheckPageView]
    next_page_token: str | None


class MonitorList(BaseModel):
    monitors: list[MonitorView]
    next_page_token: str | None


MONITOR_ERRORS: dict[int | str, dict[str, Any]] = {**ERRORS}


@router.post("", status_code=201, response_model=MonitorView, responses=MONITOR_ERRORS)
async def create_monitor(
    body: MonitorRequest, monitors: MonitorsDep, caller: CallerDep
) -> MonitorView:
    """A monitor of the caller's tenant; an active one's first check is at its schedule's
    next time (``next_check_at``)."""
    return MonitorView.of(await monitors.create(caller.tenant, body))


@router.get("", response_model=MonitorList, responses=MONITOR_ERRORS)
async def list_monitors(
    monitors: MonitorsDep,
    caller: CallerDep,
    page_size: Annotated[int, Query(ge=1, le=100)] = 20,
    page_token: Annotated[str | None, Query(pattern=MONITOR_ID)] = None,
) -> MonitorList:
    """The caller's tenant's monitors, newest first."""
    page, token = await monitors.listed(caller.tenant, page_size, page_token)
    return MonitorList(monitors=[MonitorView.of(m) for m in page], next_page_token=token)


@router.get("/{monitor_id:monitor_id}", response_model=MonitorView, responses=MONITOR_ERRORS)
async def get_monitor(
    monitor_id: MonitorId, monitors: MonitorsDep, caller: CallerDep
) -> MonitorView:
    return MonitorView.of(await monitors.get(caller.tenant, monitor_id))


@router.patch("/{monitor_id:monitor_id}", response_model=MonitorView, responses=MONITOR_ERRORS)
async def update_monitor(
    monitor_id: MonitorId, body: MonitorUpdate, monitors: MonitorsDep, caller: CallerDep
) -> MonitorView:
    """Change the settings the body names (``name``, ``schedule``, ``rules``, ``status``,
    ``retention_days``, ``webhook``); the others are kept. A new schedule or a resume sets
    the next check time from now."""
    try:
        return MonitorView.of(await monitors.update(caller.tenant, monitor_id, body))
    except ValueError as exc:
        raise HTTPException(422, str(exc)) from None


@router.post("/{monitor_id:monitor_id}:pause", response_model=MonitorView, responses=MONITOR_ERRORS)
async def pause_monitor(
    monitor_id: MonitorId, monitors: MonitorsDep, caller: CallerDep
) -> MonitorView:
    """Stop scheduled checks (a check under way finishes); idempotent."""
    changed = monitors.set_status(caller.tenant, monitor_id, MonitorStatus.PAUSED)
    return MonitorView.of(await changed)


@router.post(
    "/{monitor_id:monitor_id}:resume", response_model=MonitorView, responses=MONITOR_ERRORS
)
async def resume_monitor(
    monitor_id: MonitorId, monitors: MonitorsDep, caller: CallerDep
) -> MonitorView:
    """Check on schedule again, from the schedule's next time; idempotent."""
    changed = monitors.set_status(caller.tenant, monitor_id, MonitorStatus.ACTIVE)
    return MonitorView.of(await changed)


@router.delete(
    "/{monitor_id:monitor_id}", status_code=204, response_class=Response, responses=MONITOR_ERRORS
)
async def delete_monitor(
    monitor_id: MonitorId, monitors: MonitorsDep, caller: CallerDep
) -> Response:
    await monitors.delete(caller.tenant, monitor_id)
    return Response(status_code=204)


@router.post(
    "/{monitor_id:monitor_id}:run",
    status_code=201,
    response_model=CheckView,
    responses=MONITOR_ERRORS,
)
async def run_monitor(
    monitor_id: MonitorId, runner: CheckRunnerDep, caller: CallerDep
) -> CheckView:
    """Start a check now (also of a paused monitor): its job runs as any job does. A check
    started while the previous one still runs is ``skipped_overlap``."""
    return CheckView.of(await runner.start(caller.tenant, monitor_id))


@router.get("/{monitor_id:monitor_id}/checks", response_model=CheckList, responses=MONITOR_ERRORS)
async def list_checks(
    monitor_id: MonitorId,
    runner: CheckRunnerDep,
    caller: CallerDep,
    page_size: Annotated[int, Query(ge=1, le=100)] = 20,
    page_token: Annotated[str | None, Query(pattern=CHECK_ID)] = None,
) -> CheckList:
    """The monitor's checks, newest first."""
    checks, token = await runner.listed(caller.tenant, monitor_id, page_size, page_token)
    return CheckList(checks=[CheckView.of(c) for c in checks], next_page_token=token)


@router.get(
    "/{monitor_id:monitor_id}/checks/{check_id}", response_model=CheckView, responses=MONITOR_ERRORS
)
async def get_check(
    monitor_id: MonitorId, check_id: CheckId, runner: CheckRunnerDep, caller: CallerDep
) -> CheckView:
    """The check; one whose job has finished is compared first (once)."""
    return CheckView.of(await runner.check(caller.tenant, monitor_id, check_id))


@router.get(
    "/{monitor_id:monitor_id}/checks/{check_id}/pages",
    response_model=CheckPages,
    responses=MONITOR_ERRORS,
)
async def check_pages(
    monitor_id: MonitorId,
    check_id: CheckId,
    runner: CheckRunnerDep,
    caller: CallerDep,
    status: PageStatus | None = None,
    page_size: Annotated[int, Query(ge=1, le=100)] = 50,
    page_token: Annotated[str | None, Query(pattern=r"^[0-9a-f]{32}$")] = None,
) -> CheckPages:
    """The check's pages (of ``status``) with their diffs; empty until the check finished."""
    check, pages, token = await runner.pages(
        caller.tenant, monitor_id, check_id, status, page_size, page_token
    )
    return CheckPages(
        check=CheckView.of(check),
        pages=[CheckPageView.of(p) for p in pages],
        next_page_token=token,
    )
