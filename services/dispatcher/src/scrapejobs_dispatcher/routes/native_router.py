"""A router of the native API (``/v1``): every route's JSON body checked for text that is not
valid Unicode (edge/unicode_body.py), and, when given, one guard on every route (who may call
it); and the error answers its routes document."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from fastapi import APIRouter, Depends

from scrapejobs_dispatcher.edge.unicode_body import UnicodeBodyRoute
from scrapejobs_dispatcher.jobs.views import UNAVAILABLE, ErrorResponse

Responses = dict[int | str, dict[str, Any]]


def native_router(prefix: str, tag: str, guard: Callable[..., Any] | None = None) -> APIRouter:
    """The router of ``prefix``'s routes, listed under ``tag``; ``guard``: a dependency every
    route runs first (``require_caller``, ``require_admin``...)."""
    dependencies = [Depends(guard)] if guard is not None else []
    return APIRouter(
        route_class=UnicodeBodyRoute, prefix=prefix, tags=[tag], dependencies=dependencies
    )


def error_responses(*codes: int) -> Responses:
    """What a route answers with ``codes`` (the error body) and 503 (a dependency that did not
    answer in time), for the OpenAPI document."""
    return {**{code: {"model": ErrorResponse} for code in codes}, **UNAVAILABLE}
