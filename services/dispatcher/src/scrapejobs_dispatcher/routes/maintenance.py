"""Operations triggered on a schedule (Terraform creates the Cloud Scheduler job)."""

from __future__ import annotations

from datetime import timedelta
from typing import Annotated

from fastapi import Query
from pydantic import BaseModel, Field

from scrapejobs_dispatcher.dependencies import (
    MonitorTickDep,
    ReconcileAfterDep,
    RecoveryDep,
    UsageDep,
)
from scrapejobs_dispatcher.edge.record_view import RecordView
from scrapejobs_dispatcher.routes.jobs import ERRORS
from scrapejobs_dispatcher.routes.native_router import native_router
from scrapejobs_dispatcher.tenants.authentication import require_operator

router = native_router("/v1/maintenance", "maintenance", require_operator)


WEBHOOK_GRACE = timedelta(minutes=10)  # a queued event has been attempted by then
WEBHOOK_WINDOW = timedelta(hours=24)


class Republished(BaseModel):
    jobs: int
    tasks: int


class ReconcileReport(BaseModel):
    batches: int = Field(description="batches published again")
    tasks: int = Field(description="their open tasks")
    skipped: int = Field(
        description="stalled batches left alone: their job, or the system, is moving"
    )
    webhooks: int = Field(
        description="webhook events queued again: their job ended 10 min to 24 h ago and "
        "no delivery was ever attempted"
    )


@router.post("/reconcile", response_model=ReconcileReport, responses=ERRORS)
async def reconcile(
    recovery: RecoveryDep,
    reconcile_after_s: ReconcileAfterDep,
    older_than_s: Annotated[
        int | None,
        Query(ge=1, le=86_400, description="stalled for this long (default: the setting)"),
    ] = None,
    limit: Annotated[int, Query(ge=1, le=1000)] = 200,
) -> ReconcileReport:
    """Publish again batches with open tasks that made no progress for longer than the retry
    policy allows (lost messages). Scheduled every few minutes; safe to call at any time."""
    stalled_for = older_than_s or reconcile_after_s
    done = await recovery.reconcile(timedelta(seconds=stalled_for), limit)
    webhooks = await recovery.resend_lost_webhooks(WEBHOOK_GRACE, WEBHOOK_WINDOW, limit)
    return ReconcileReport(
        batches=done.batches, tasks=done.tasks, skipped=done.skipped, webhooks=webhooks
    )


@router.post("/republish", response_model=Republished, responses=ERRORS)
async def republish_stuck(
    recovery: RecoveryDep,
    older_than_s: Annotated[int, Query(ge=0, le=86_400)] = 300,
) -> Republished:
    """Publish again the queued tasks of submissions that stopped before all their messages
    were published (e.g. the dispatcher was stopped mid-submission)."""
    jobs, tasks = await recovery.republish_stuck(timedelta(seconds=older_than_s))
    return Republished(jobs=jobs, tasks=tasks)


class UsageRolledUp(BaseModel):
    days: int = Field(description="Days of this billing period and the last one read")


@router.post("/usage", response_model=UsageRolledUp, responses=ERRORS)
async def roll_up_usage(usage: UsageDep) -> UsageRolledUp:
    """Sum each ended day of this billing period and the last one into its own record, so the
    usage history (Firecrawl's credit and token history) outlives the hourly figures (kept 35
    days). Scheduled daily; safe to call at any time (a day already summed is read, not
    summed again)."""
    return UsageRolledUp(days=await usage.roll_up())


class MonitorsTick(RecordView):
    due: int = Field(description="monitors whose check was started (or found started)")
    compared: int = Field(description="checks whose job had ended, compared (events sent)")
    failed: int = Field(
        description="due monitors whose check could not start (the tenant's quota spent, an "
        "option no longer served): each check recorded failed with its reason, its schedule "
        "moved on"
    )
    errors: int = Field(description="starts or comparisons that met an error: tried next tick")
    left: int = Field(description="due monitors and open checks left to the next tick")


@router.post("/monitors", response_model=MonitorsTick, responses=ERRORS)
async def start_due_checks(
    tick_of: MonitorTickDep, limit: Annotated[int, Query(ge=1, le=1000)] = 200
) -> MonitorsTick:
    """Start the check of every active monitor whose next check time has come, and move that
    time on; compare the checks whose job has ended (their events go out). Scheduled every
    minute; a tick retried or delivered twice starts one check and compares each once."""
    return MonitorsTick.of(await tick_of.run(limit))
