"""REST resources: /v1/dead-letters (inspect and replay tasks Pub/Sub gave up on)."""

from __future__ import annotations

from typing import Annotated

from fastapi import Query

from scrapejobs_dispatcher.dependencies import RecoveryDep
from scrapejobs_dispatcher.jobs.views import (
    HOST_FILTER,
    DeadLetter,
    DeadLetterPage,
    Replayed,
    ReplayFilters,
)
from scrapejobs_dispatcher.routes.jobs import ERRORS, TenantFilter
from scrapejobs_dispatcher.routes.native_router import native_router
from scrapejobs_dispatcher.tenants.authentication import CallerDep, require_caller
from scrapejobs_shared.politeness.host_key import HOST_PATTERN

router = native_router("/v1", "dead letters", require_caller)


@router.get("/dead-letters", response_model=DeadLetterPage, responses=ERRORS)
async def list_dead_letters(
    recovery: RecoveryDep,
    caller: CallerDep,
    job_id: Annotated[
        str | None, Query(min_length=1, max_length=64, pattern=r"^[A-Za-z0-9_\-]+$")
    ] = None,
    host: Annotated[
        str | None,
        Query(min_length=1, max_length=2048, pattern=HOST_PATTERN, description=HOST_FILTER),
    ] = None,
    tenant: TenantFilter = None,
    page_size: Annotated[int, Query(ge=1, le=500)] = 50,
    page_token: str | None = None,
) -> DeadLetterPage:
    """Dead-lettered tasks of the caller's tenant (an admin's: every tenant's, or
    ``tenant``'s), most recent first, with the last error their attempts recorded."""
    page = await recovery.dead_letters(job_id, host, page_size, page_token, caller, tenant)
    return DeadLetterPage(
        dead_letters=[DeadLetter.of(task) for task in page.items],
        next_page_token=page.next_page_token,
    )


@router.post("/dead-letters:replay", response_model=Replayed, responses=ERRORS)
async def replay_dead_letters(
    body: ReplayFilters, recovery: RecoveryDep, caller: CallerDep
) -> Replayed:
    """Put dead letters matching the filters (at most ``limit``, 500) back to ``queued`` with
    fresh attempts and publish them again; a finished job runs again and completes again. A
    second replay of the same tasks replays nothing."""
    replayed = await recovery.replay_dead_letters(
        body.job_id, body.host, caller, body.limit, body.tenant
    )
    return Replayed(replayed=replayed)
