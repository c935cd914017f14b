"""Firecrawl's monitor endpoints over native monitors: ``/v2/monitor`` create, list
(``limit``, ``offset``), get, update (pause), delete, run, a monitor's checks (``limit``,
``offset``) and a check with its pages (``limit``, ``skip``, ``status``; ``next`` pages on), in
the shapes firecrawl-py 4.55 reads (shared/firecrawl/monitor_shapes.py)."""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Sequence
from typing import Annotated, Any, TypeVar

from fastapi import Path, Query, Request

from scrapejobs_dispatcher.dependencies import CheckRunnerDep, MonitorsDep
from scrapejobs_dispatcher.firecrawl.dependencies import ServedHereDep
from scrapejobs_dispatcher.firecrawl.errors import v2_router
from scrapejobs_dispatcher.firecrawl.monitor_answers import (
    CheckAnswer,
    CheckDetailAnswer,
    ChecksAnswer,
    MonitorAnswer,
    MonitorDeleted,
    MonitorsAnswer,
)
from scrapejobs_dispatcher.firecrawl.monitor_requests import (
    MonitorBody,
    MonitorChange,
    monitor_request,
    monitor_update,
)
from scrapejobs_dispatcher.firecrawl.request_models import SdkRequest
from scrapejobs_dispatcher.routes.monitors import CHECK_ID, MONITOR_ID
from scrapejobs_dispatcher.tenants.authentication import CallerDep
from scrapejobs_shared.domain.monitor_checks import PageStatus
from scrapejobs_shared.domain.monitor_events import check_data, page_data
from scrapejobs_shared.firecrawl.monitor_shapes import (
    firecrawl_check,
    firecrawl_monitor,
    firecrawl_page,
)

T = TypeVar("T")
router = v2_router()
MonitorId = Annotated[str, Path(pattern=MONITOR_ID, description="The monitor's id")]
CheckId = Annotated[str, Path(pattern=CHECK_ID, description="The check's id")]
Limit = Annotated[int, Query(ge=1, le=100)]
Offset = Annotated[int, Query(ge=0, le=10_000)]
PAGE_TOKEN = r"^[0-9a-f]{32}$"
LISTED = 100  # items read at a time while skipping to an offset


@router.post("/monitor", response_model=MonitorAnswer)
async def create_monitor(
    body: MonitorBody, monitors: MonitorsDep, here: ServedHereDep, caller: CallerDep
) -> MonitorAnswer:
    """A monitor of one target (its URLs, or a crawl) checked on its schedule; its events go
    to its webhook in Firecrawl's shape."""
    made = await monitors.create(caller.tenant, monitor_request(body, here))
    return MonitorAnswer.model_validate({"data": firecrawl_monitor(made)})


@router.get("/monitor", response_model=MonitorsAnswer)
async def list_monitors(
    monitors: MonitorsDep, caller: CallerDep, limit: Limit = 20, offset: Offset = 0
) -> MonitorsAnswer:
    """The caller's monitors, newest first."""

    async def listed(size: int, after: str | None) -> tuple[Sequence[Any], str | None]:
        return await monitors.listed(caller.tenant, size, after)

    page, _ = await _skipped(listed, limit, offset)
    return MonitorsAnswer.model_validate({"data": [firecrawl_monitor(m) for m in page]})


@router.get("/monitor/{monitor_id}", response_model=MonitorAnswer)
async def get_monitor(
    monitor_id: MonitorId, monitors: MonitorsDep, caller: CallerDep
) -> MonitorAnswer:
    monitor = await monitors.get(caller.tenant, monitor_id)
    return MonitorAnswer.model_validate({"data": firecrawl_monitor(monitor)})


@router.patch("/monitor/{monitor_id}", response_model=MonitorAnswer)
async def update_monitor(
    monitor_id: MonitorId, body: MonitorChange, monitors: MonitorsDep, caller: CallerDep
) -> MonitorAnswer:
    """Change what the body names (``status`` pauses or resumes); the rest is kept."""
    changed = monitors.update(caller.tenant, monitor_id, monitor_update(body))
    return MonitorAnswer.model_validate({"data": firecrawl_monitor(await changed)})


@router.delete("/monitor/{monitor_id}", response_model=MonitorDeleted)
async def delete_monitor(
    monitor_id: MonitorId, monitors: MonitorsDep, caller: CallerDep
) -> MonitorDeleted:
    await monitors.delete(caller.tenant, monitor_id)
    return MonitorDeleted()


@router.post("/monitor/{monitor_id}/run", response_model=CheckAnswer)
async def run_monitor(
    monitor_id: MonitorId,
    runner: CheckRunnerDep,
    caller: CallerDep,
    _: SdkRequest | None = None,
) -> CheckAnswer:
    """Start a check now: ``skipped_overlap`` while the previous one still runs."""
    check = await runner.start(caller.tenant, monitor_id)
    return CheckAnswer.model_validate({"data": firecrawl_check(check_data(check))})


@router.get("/monitor/{monitor_id}/checks", response_model=ChecksAnswer)
async def list_checks(
    monitor_id: MonitorId,
    runner: CheckRunnerDep,
    caller: CallerDep,
    limit: Limit = 20,
    offset: Offset = 0,
) -> ChecksAnswer:
    """The monitor's checks, newest first."""

    async def listed(size: int, after: str | None) -> tuple[Sequence[Any], str | None]:
        return await runner.listed(caller.tenant, monitor_id, size, after)

    page, _ = await _skipped(listed, limit, offset)
    return ChecksAnswer.model_validate({"data": [firecrawl_check(check_data(c)) for c in page]})


@router.get("/monitor/{monitor_id}/checks/{check_id}", response_model=CheckDetailAnswer)
async def get_check(
    request: Request,
    monitor_id: MonitorId,
    check_id: CheckId,
    runner: CheckRunnerDep,
    caller: CallerDep,
    limit: Limit = 50,
    skip: Offset = 0,
    status: PageStatus | None = None,
    cursor: Annotated[str | None, Query(pattern=PAGE_TOKEN)] = None,
) -> CheckDetailAnswer:
    """The check (compared first once its job has finished) and a page of its pages: those
    that are not ``same`` first; ``next`` is the URL of the following page."""

    check = await runner.check(caller.tenant, monitor_id, check_id)

    async def listed(size: int, after: str | None) -> tuple[Sequence[Any], str | None]:
        return await runner.pages_of(check, status, size, after)

    pages, token = await _skipped(listed, limit, skip, cursor)
    following = None
    if token is not None:
        params = {"limit": limit, "cursor": token} | ({"status": status.value} if status else {})
        following = str(request.url.remove_query_params("skip").include_query_params(**params))
    detail = firecrawl_check(check_data(check)) | {
        "pages": [firecrawl_page(page_data(check, page)) for page in pages],
        "next": following,
    }
    return CheckDetailAnswer.model_validate({"data": detail, "next": following})


async def _skipped(
    listed: Callable[[int, str | None], Awaitable[tuple[Sequence[T], str | None]]],
    limit: int,
    offset: int,
    after: str | None = None,
) -> tuple[list[T], str | None]:
    """``limit`` items from ``offset`` (counted from the page token ``after``) of a listing
    paged by tokens, and the token after them (None: no more)."""
    token = after
    while offset > 0:
        skipped, token = await listed(min(offset, LISTED), token)
        offset -= len(skipped)
        if token is None:
            return [], None
    items, token = await listed(limit, token)
    return list(items), token
