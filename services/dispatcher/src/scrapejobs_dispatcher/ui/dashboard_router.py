"""The dashboard's routers and what their pages' queries share: under ``/ui``, out of the
OpenAPI document, answering HTML, every page behind ``require_viewer``."""

from __future__ import annotations

from typing import Annotated

from fastapi import APIRouter, Depends, Query
from fastapi.responses import HTMLResponse

from scrapejobs_dispatcher.ui.access import require_viewer

PageToken = Annotated[str | None, Query(max_length=2048)]


def dashboard_router() -> APIRouter:
    """A router of pages a viewer signed in to the dashboard may open."""
    return APIRouter(
        prefix="/ui",
        include_in_schema=False,
        dependencies=[Depends(require_viewer)],
        default_response_class=HTMLResponse,
    )
