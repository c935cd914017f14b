"""A caller without valid credentials is answered 401 before its body is read, on /v1 and /v2,
in both authenticating modes; an authenticated body is read and judged as before."""

from __future__ import annotations

import json
from typing import Any

import pytest

from scrapejobs_dispatcher.settings import DispatcherSettings
from scrapejobs_dispatcher.tenants.api_keys import hash_api_key
from scrapejobs_shared.adapters.memory.job_store import MemoryJobStore
from support.memory_dispatcher import memory_dispatcher

KEY = "sj_secret"


async def _call(app: Any, path: str, headers: dict[str, str], body: bytes) -> tuple[int, Any, int]:
    """Send one POST straight through ASGI; returns status, JSON body and how many times the
    application asked for the request body."""
    reads = 0

    async def receive() -> dict[str, Any]:
        nonlocal reads
        reads += 1
        return {"type": "http.request", "body": body, "more_body": False}

    sent: list[dict[str, Any]] = []

    async def send(message: dict[str, Any]) -> None:
        sent.append(message)

    scope = {
        "type": "http",
        "asgi": {"version": "3.0"},
        "http_version": "1.1",
        "method": "POST",
        "scheme": "http",
        "path": path,
        "raw_path": path.encode(),
        "query_string": b"",
        "root_path": "",
        "headers": [(b"content-type", b"application/json")]
        + [(name.lower().encode(), value.encode()) for name, value in headers.items()],
        "client": ("127.0.0.1", 1),
        "server": ("t", 80),
    }
    await app(scope, receive, send)
    status = next(m["status"] for m in sent if m["type"] == "http.response.start")
    payload = b"".join(m.get("body", b"") for m in sent if m["type"] == "http.response.body")
    return status, json.loads(payload), reads


@pytest.fixture(params=["api_key", "iam"])
def app(request: pytest.FixtureRequest) -> Any:
    settings = DispatcherSettings(auth_mode=request.param, api_key_hashes=hash_api_key(KEY))
    return memory_dispatcher(MemoryJobStore(), settings)


@pytest.mark.parametrize("path", ["/v1/jobs", "/v1/scrape", "/v2/scrape", "/v2/crawl"])
async def test_no_credentials_is_a_401_without_reading_the_body(app: Any, path: str) -> None:
    async with app.router.lifespan_context(app):
        status, body, reads = await _call(app, path, {}, b"{")
    assert status == 401 and reads == 0
    if path.startswith("/v2/"):
        assert body["success"] is False and "required" in body["error"]
    else:
        assert body["error"]["code"] == "unauthenticated"


async def test_a_wrong_key_is_refused_before_the_body_too() -> None:
    settings = DispatcherSettings(auth_mode="api_key", api_key_hashes=hash_api_key(KEY))
    app = memory_dispatcher(MemoryJobStore(), settings)
    async with app.router.lifespan_context(app):
        status, _, reads = await _call(app, "/v1/jobs", {"X-API-Key": "sj_wrong"}, b"{")
    assert (status, reads) == (401, 0)


async def test_an_authenticated_body_is_read_and_judged() -> None:
    settings = DispatcherSettings(auth_mode="api_key", api_key_hashes=hash_api_key(KEY))
    app = memory_dispatcher(MemoryJobStore(), settings)
    async with app.router.lifespan_context(app):
        status, body, reads = await _call(app, "/v1/jobs", {"X-API-Key": KEY}, b"{")
        assert status == 422 and reads >= 1 and body["error"]["code"] == "invalid_request"
        bearer = {"Authorization": f"Bearer {KEY}"}
        status, body, _ = await _call(app, "/v2/scrape", bearer, b"{")
        assert status == 400 and body["success"] is False
