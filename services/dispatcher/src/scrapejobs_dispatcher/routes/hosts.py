"""Per-host politeness state: is a host paused (circuit breaker, Retry-After), how busy is it."""

from __future__ import annotations

from datetime import datetime
from typing import Annotated

from fastapi import HTTPException, Query
from pydantic import BaseModel, Field

from scrapejobs_dispatcher.dependencies import HostGateDep
from scrapejobs_dispatcher.routes.jobs import ERRORS
from scrapejobs_dispatcher.routes.native_router import native_router
from scrapejobs_dispatcher.tenants.authentication import require_admin
from scrapejobs_shared.domain.clock import utc_now
from scrapejobs_shared.extraction.field_types import HttpUrl
from scrapejobs_shared.politeness.host_key import host_key, origin_url

router = native_router("/v1/hosts", "hosts", require_admin)  # a host's state is every tenant's


class HostView(BaseModel):
    host: str = Field(description="The origin: scheme://host[:port]")
    paused: bool = Field(description="No fetch starts now (breaker open or Retry-After)")
    circuit_open_until: datetime | None
    next_request_at: datetime | None = Field(description="Earliest start of the next fetch")
    consecutive_failures: int
    in_flight: int = Field(
        description="Slots held right now across all workers: fetches in flight, slots a "
        "worker keeps warm for its next fetch to the host (given back after 1 s idle), and "
        "slots resting after their fourth take within 10 s, until the first is 10 s old (a "
        "slot's document takes under one write a second)"
    )


@router.get("", response_model=HostView, responses=ERRORS)
async def host_state(
    gate: HostGateDep,
    url: Annotated[HttpUrl, Query(description="Any http(s) URL on the host")],
) -> HostView:
    try:
        key = host_key(url)
    except ValueError as exc:
        raise HTTPException(422, f"url: {exc}") from None
    now = utc_now()
    state = await gate.state(key, now)
    paused = any(t is not None and t > now for t in (state.open_until, state.next_at))
    return HostView(
        host=origin_url(key),
        paused=paused,
        circuit_open_until=state.open_until,
        next_request_at=state.next_at,
        consecutive_failures=state.failures,
        in_flight=state.in_flight,
    )
