"""Operations triggered on a schedule (Terraform creates the Cloud Scheduler job)."""

from __future__ import annotations

from datetime import timedelta
from typing import Annotated

from fastapi import APIRouter, Depends, Query, Request
from pydantic import BaseModel

from scrapejobs_dispatcher.authentication import require_caller
from scrapejobs_dispatcher.routes.jobs import ERRORS
from scrapejobs_dispatcher.service import JobService

router = APIRouter(
    prefix="/v1/maintenance", tags=["maintenance"], dependencies=[Depends(require_caller)]
)


class Republished(BaseModel):
    jobs: int
    tasks: int


@router.post("/republish", response_model=Republished, responses=ERRORS)
async def republish_stuck(
    request: Request,
    older_than_s: Annotated[int, Query(ge=0, le=86_400)] = 300,
) -> Republished:
    """Publish again the queued tasks of submissions that stopped before all their messages
    were published (e.g. the dispatcher was stopped mid-submission)."""
    service: JobService = request.app.state.jobs
    jobs, tasks = await service.republish_stuck(timedelta(seconds=older_than_s))
    return Republished(jobs=jobs, tasks=tasks)
