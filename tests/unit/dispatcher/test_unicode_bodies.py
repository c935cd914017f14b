"""Text that is not valid Unicode (a lone surrogate, which JSON can escape) is refused at submit
naming the field, on /v1 (422) and /v2 (400, Firecrawl's shape); header values with control
characters likewise. Found by a fuzzer without the project's hooks: such a body answered 500,
and a job stored with one crashed its worker five times before it dead-lettered."""

from __future__ import annotations

import json
from collections.abc import AsyncIterator
from typing import Any

import httpx
import pytest

from scrapejobs_dispatcher.settings import DispatcherSettings
from scrapejobs_shared.adapters.memory.job_store import MemoryJobStore
from support.memory_dispatcher import memory_dispatcher

LONE = "I\udeab"  # a low surrogate with no high one before it
URL = "http://shop.example/"


@pytest.fixture
async def client() -> AsyncIterator[httpx.AsyncClient]:
    store = MemoryJobStore()
    app = memory_dispatcher(store, DispatcherSettings(auth_mode="none", scrape_max_wait_s=0.02))
    async with app.router.lifespan_context(app):
        transport = httpx.ASGITransport(app=app)
        async with httpx.AsyncClient(transport=transport, base_url="http://t") as http:
            http.store = store  # type: ignore[attr-defined]
            yield http


def _post(client: httpx.AsyncClient, path: str, body: Any) -> Any:
    # json.dumps escapes the surrogates as \\udXXX: what a caller's JSON encoder sends
    content = json.dumps(body)
    return client.post(path, content=content, headers={"content-type": "application/json"})


@pytest.mark.parametrize(
    ("body", "field"),
    [
        ({"url": URL, "extract": {"t": {"css": "h1", "re": LONE}}}, "extract.t.re"),
        ({"url": URL, "options": {"headers": {"X-Token": LONE}}}, "options.headers.X-Token"),
        ({"url": URL, "labels": {"team": LONE}}, "labels.team"),
        ({"url": URL, "labels": {LONE: "x"}}, "labels.I\\udeab"),
        ({"urls": [URL, URL + LONE]}, "urls[1]"),
    ],
)
async def test_lone_surrogates_are_a_422_naming_the_field(
    client: httpx.AsyncClient, body: dict[str, Any], field: str
) -> None:
    response = await _post(client, "/v1/jobs", body)
    assert response.status_code == 422, response.text
    error = response.json()["error"]
    assert error["field"] == field and "not valid Unicode" in error["message"]
    assert (await client.get("/v1/jobs")).json()["jobs"] == []  # nothing stored


async def test_a_v2_option_with_a_lone_surrogate_is_a_400_naming_it(
    client: httpx.AsyncClient,
) -> None:
    response = await _post(client, "/v2/scrape", {"url": URL, "location": {"country": LONE}})
    assert response.status_code == 400, response.text
    body = response.json()
    assert body["success"] is False and "location.country" in body["error"]


async def test_a_proper_surrogate_pair_is_text(client: httpx.AsyncClient) -> None:
    response = await _post(client, "/v1/jobs", {"url": URL, "labels": {"team": "\U0001f600"}})
    assert response.status_code == 202, response.text


@pytest.mark.parametrize("value", ["a\x00b", "a\x1b[31m", "tab\tok\x7f", "caf\u00e9"])
async def test_header_values_with_control_characters_are_refused_naming_the_header(
    client: httpx.AsyncClient, value: str
) -> None:
    body = {"url": URL, "options": {"headers": {"X-Token": value}}}
    response = await _post(client, "/v1/jobs", body)
    assert response.status_code == 422, response.text
    assert "'X-Token'" in response.json()["error"]["message"]
