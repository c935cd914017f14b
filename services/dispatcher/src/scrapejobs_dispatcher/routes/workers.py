"""The workers view: /v1/workers, the worker processes heard from in the last 5 minutes."""

from __future__ import annotations

from datetime import datetime

from pydantic import BaseModel, Field

from scrapejobs_dispatcher.dependencies import WorkersDep
from scrapejobs_dispatcher.jobs.stats_views import ProxyEntry
from scrapejobs_dispatcher.routes.jobs import ERRORS
from scrapejobs_dispatcher.routes.native_router import native_router
from scrapejobs_dispatcher.tenants.authentication import require_admin
from scrapejobs_shared.domain.clock import utc_now
from scrapejobs_shared.domain.workers import SEEN_WITHIN, WorkerView

router = native_router("/v1", "monitoring", require_admin)
MAX_LISTED = 200  # worker processes listed (and summed in /v1/stats' proxies) at most


class InFlight(BaseModel):
    batches: int = Field(description="Batches it is running")
    pages: int = Field(description="Pages it is fetching or extracting")


class WorkerEntry(BaseModel):
    id: str = Field(description="The process: host, pid and a random part")
    revision: str = Field(description="The Cloud Run revision it runs (local under make dev)")
    started_at: datetime
    last_seen: datetime = Field(description="Its last report (about every second while busy)")
    batches: int = Field(description="Batches it finished since it started")
    pages: int = Field(description="Tasks it finished since it started, whatever their outcome")
    in_flight: InFlight
    proxies: list[ProxyEntry] = Field(default_factory=list, description="Proxies it went through")

    @classmethod
    def of(cls, view: WorkerView) -> WorkerEntry:
        return cls(
            id=view.worker_id,
            revision=view.revision,
            started_at=view.started_at,
            last_seen=view.last_seen,
            batches=view.batches,
            pages=view.pages,
            in_flight=InFlight(batches=view.batches_in_flight, pages=view.pages_in_flight),
            proxies=[ProxyEntry.of(use) for use in view.proxies],
        )


class WorkerList(BaseModel):
    workers: list[WorkerEntry] = Field(description="The most recently heard from first")


@router.get("/workers", response_model=WorkerList, responses=ERRORS)
async def workers(directory: WorkersDep) -> WorkerList:
    """Worker processes heard from in the last 5 minutes: what each finished since it started
    and what it has in hand. One read per process listed; reports ride along with the
    workers' own commits."""
    listed = await directory.seen_since(utc_now() - SEEN_WITHIN, MAX_LISTED)
    return WorkerList(workers=[WorkerEntry.of(view) for view in listed])
