"""Every dependency of every route is a coroutine function: FastAPI runs a plain function in
its thread pool, a thread hop per dependency per request (a fifth of a status poll's time in
the dispatcher's profile: bench/README.md, issue 39)."""

from __future__ import annotations

import inspect
from collections.abc import Iterator

from fastapi import APIRouter
from fastapi.dependencies.models import Dependant
from fastapi.routing import APIRoute

from scrapejobs_dispatcher.main import API_ROUTERS
from scrapejobs_dispatcher.ui import routes as dashboard

ROUTERS: list[APIRouter] = [*API_ROUTERS, dashboard.router, dashboard.sign_in_router]


def _calls(dependant: Dependant) -> Iterator[tuple[str, object]]:
    for sub in dependant.dependencies:
        if sub.call is not None:
            yield getattr(sub.call, "__name__", repr(sub.call)), sub.call
        yield from _calls(sub)


def test_no_route_depends_on_a_plain_function() -> None:
    routes = [route for router in ROUTERS for route in router.routes if isinstance(route, APIRoute)]
    assert len(routes) > 50  # the whole API, /v2 and the dashboard
    assert sum(1 for route in routes for _ in _calls(route.dependant)) > 50
    plain = {
        f"{route.path}: {name}"
        for route in routes
        for name, call in _calls(route.dependant)
        if not inspect.iscoroutinefunction(call)
        and not inspect.iscoroutinefunction(type(call).__call__)  # an instance's async call
    }
    assert plain == set()
