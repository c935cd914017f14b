"""fetching/connection_pool.py uses httpx's and httpcore's private names (its docstring lists
them). An upgrade of either must re-check that module: these tests fail loudly when the
installed versions or the names it relies on change."""

from __future__ import annotations

import ssl
import tomllib
from pathlib import Path

import httpcore
import httpx
from httpcore._async.interfaces import AsyncConnectionInterface

from scrapejobs_worker.fetching.connection_pool import (
    ADAPTED_FROM,
    LinearConnectionPool,
    PinnedTransport,
)

WORKER_PYPROJECT = Path(__file__).resolve().parents[3] / "services/worker/pyproject.toml"
RECHECK = "re-check scrapejobs_worker/fetching/connection_pool.py against the new release"


def test_httpcore_is_the_version_the_pool_pass_was_adapted_from() -> None:
    assert httpcore.__version__ == ADAPTED_FROM, (
        "httpcore changed: compare AsyncConnectionPool._assign_requests_to_connections with "
        "scrapejobs_worker/fetching/connection_pool.py, port any change, then update "
        "ADAPTED_FROM (or drop the override if upstream made the pass linear)"
    )


def test_httpx_is_the_minor_release_whose_transport_keeps_its_pool_in_pool() -> None:
    assert httpx.__version__.startswith("0.28."), f"httpx {httpx.__version__}: {RECHECK}"


def test_both_are_pinned_below_their_next_minor_release() -> None:
    dependencies = tomllib.loads(WORKER_PYPROJECT.read_text(encoding="utf-8"))["project"][
        "dependencies"
    ]
    assert "httpx>=0.28.1,<0.29" in dependencies
    assert f"httpcore>={ADAPTED_FROM},<1.1" in dependencies


def test_the_names_the_module_relies_on_are_there() -> None:
    assert callable(httpcore.AsyncConnectionPool._assign_requests_to_connections)
    assert isinstance(AsyncConnectionInterface, type)
    pool = httpcore.AsyncConnectionPool(max_connections=3, max_keepalive_connections=2)
    for name in ("_requests", "_connections", "_max_connections", "_max_keepalive_connections"):
        assert hasattr(pool, name), f"httpcore's pool has no {name}: {RECHECK}"
    assert isinstance(httpx.AsyncHTTPTransport()._pool, httpcore.AsyncConnectionPool), RECHECK


async def test_the_transport_sends_through_our_pool() -> None:
    """httpx's transport reads its pool from ``_pool`` when it sends: ours is the one asked."""
    transport = PinnedTransport(
        httpcore.AnyIOBackend(), httpx.Limits(max_connections=2), ssl.create_default_context()
    )
    asked: list[httpcore.Request] = []

    async def handle(request: httpcore.Request) -> httpcore.Response:
        asked.append(request)
        return httpcore.Response(204)

    assert isinstance(transport._pool, LinearConnectionPool)
    transport._pool.handle_async_request = handle  # type: ignore[method-assign]
    response = await transport.handle_async_request(httpx.Request("GET", "http://127.0.0.1:9/"))
    assert response.status_code == 204 and len(asked) == 1
    await transport.aclose()
