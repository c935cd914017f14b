"""The search providers beyond a plain SearXNG: an instance behind Cloud Run IAM (an ID token
for its audience on each search, kept until it nears its expiry, fetched again on a 401), and
ddgs (its API as the pinned release has it; its answers, its errors and its time as the port
says; the real library, from a machine without internet, a clear 502 or 504 in time)."""

from __future__ import annotations

import asyncio
import base64
import inspect
import json
import time
from collections.abc import Iterator
from dataclasses import fields
from typing import Any

import pytest

from scrapejobs_devstack.searxng_standin import SearxngStandin, result
from scrapejobs_dispatcher.search.ddgs_engine import METHOD, DdgsEngine, hits_of, region_of
from scrapejobs_dispatcher.search.id_token_auth import GoogleIdTokenAuth, token_expiry
from scrapejobs_dispatcher.search.searxng_engine import SearxngEngine
from scrapejobs_dispatcher.settings import DispatcherSettings
from scrapejobs_shared.adapters.memory.job_store import MemoryJobStore
from scrapejobs_shared.ports.search_engine import SearchFailed, SearchQuery, SearchTimedOut
from support.memory_dispatcher import memory_client


@pytest.fixture
def standin() -> Iterator[SearxngStandin]:
    running = SearxngStandin()
    running.results["cloud run"] = [result("https://a.example/1", "One")]
    yield running
    running.stop()


def jwt_expiring_at(exp: float, n: int) -> str:
    def part(value: dict[str, Any]) -> str:
        return base64.urlsafe_b64encode(json.dumps(value).encode()).decode().rstrip("=")

    return f"{part({'alg': 'RS256', 'typ': 'JWT'})}.{part({'exp': exp, 'n': n})}.c2ln"


async def test_an_instance_behind_iam_gets_an_id_token_kept_until_it_nears_expiry(
    standin: SearxngStandin,
) -> None:
    now = [1_000_000.0]
    minted: list[str] = []

    def fetch(audience: str) -> str:
        assert audience == "https://searxng-abc.a.run.app"
        minted.append(jwt_expiring_at(now[0] + 3600, len(minted)))
        return minted[-1]

    auth = GoogleIdTokenAuth("https://searxng-abc.a.run.app", fetch, clock=lambda: now[0])
    engine = SearxngEngine(standin.url, auth=auth)
    standin.bearer = jwt_expiring_at(now[0] + 3600, 0)
    query = SearchQuery("cloud run", limit=1)
    assert [hit.url for hit in await engine.search(query, 5)] == ["https://a.example/1"]
    await engine.search(query, 5)
    assert len(minted) == 1  # kept
    now[0] += 3600 - 299  # within five minutes of its exp: another
    standin.bearer = jwt_expiring_at(now[0] + 3600, 1)
    await engine.search(query, 5)
    assert len(minted) == 2
    standin.bearer = jwt_expiring_at(now[0] + 3600, 2)  # revoked early: a 401, then a new one
    await engine.search(query, 5)
    assert len(minted) == 3 and standin.authorizations[-2:] == [
        f"Bearer {minted[1]}",
        f"Bearer {minted[2]}",
    ]
    assert token_expiry(minted[0]) == 1_000_000.0 + 3600
    assert token_expiry("not a token") is None


async def test_without_its_token_the_instance_s_refusal_is_a_502(standin: SearxngStandin) -> None:
    standin.bearer = "expected"
    with pytest.raises(SearchFailed, match="HTTP 401"):
        await SearxngEngine(standin.url).search(SearchQuery("cloud run"), 5)


def test_ddgs_has_what_the_engine_calls() -> None:
    """The pinned ddgs release: its search methods, the keywords passed, its exceptions and
    the keys of its results (results.py's dataclasses) are what ddgs_engine.py reads."""
    from ddgs import exceptions, results
    from ddgs.ddgs import DDGS

    searched = inspect.signature(DDGS._search_sync).parameters
    for name in ("region", "safesearch", "timelimit", "max_results", "backend"):
        assert name in searched, name
    for method in METHOD.values():
        assert callable(getattr(DDGS, method))
    assert "timeout" in inspect.signature(DDGS).parameters
    assert issubclass(exceptions.TimeoutException, exceptions.DDGSException)
    keys = {cls: {f.name for f in fields(cls)} for cls in (results.TextResult, results.NewsResult)}
    assert {"title", "href", "body"} <= keys[results.TextResult]
    assert {"title", "url", "body", "date", "image"} <= keys[results.NewsResult]
    assert {"title", "url", "image"} <= {f.name for f in fields(results.ImagesResult)}


class Searcher:
    """ddgs's DDGS as its results.py shapes the answers (the real one needs internet)."""

    def __init__(self, answer: Any = None, sleep_s: float = 0.0) -> None:
        self.answer = answer
        self.sleep_s = sleep_s
        self.calls: list[tuple[str, str, dict[str, Any]]] = []

    def __call__(self, timeout_s: float) -> Searcher:
        self.timeout_s = timeout_s
        return self

    def _search(self, method: str, query: str, kwargs: dict[str, Any]) -> list[dict[str, Any]]:
        self.calls.append((method, query, kwargs))
        time.sleep(self.sleep_s)
        if isinstance(self.answer, Exception):
            raise self.answer
        return list(self.answer or [])

    def text(self, query: str, **kwargs: Any) -> list[dict[str, Any]]:
        return self._search("text", query, kwargs)

    def news(self, query: str, **kwargs: Any) -> list[dict[str, Any]]:
        return self._search("news", query, kwargs)

    def images(self, query: str, **kwargs: Any) -> list[dict[str, Any]]:
        return self._search("images", query, kwargs)


async def test_ddgs_answers_errors_and_time_as_the_port_says() -> None:
    from ddgs.exceptions import DDGSException, TimeoutException

    text = [
        {"title": "One", "href": "https://a.example/1", "body": "first"},
        {"title": "No link", "href": ""},
        {"title": "Two", "href": "https://b.example/2", "body": "second"},
    ]
    searcher = Searcher(text)
    engine = DdgsEngine(searcher=searcher)
    query = SearchQuery("q", limit=1, language="de-AT", time_range="week")
    [hit] = await engine.search(query, 5)
    assert (hit.url, hit.title, hit.description) == ("https://a.example/1", "One", "first")
    [(method, asked, kwargs)] = searcher.calls
    assert (method, asked) == ("text", "q")
    assert kwargs["region"] == "at-de" and kwargs["timelimit"] == "w"
    assert kwargs["max_results"] == 1 and searcher.timeout_s < 5
    news = [
        {
            "title": "N",
            "url": "https://n.example/",
            "body": "b",
            "date": "2026-12-01T08:00:00+00:00",
            "image": "https://n.example/i.jpg",
        }
    ]
    [item] = hits_of(news, SearchQuery("q", source="news"))
    assert item.date == "2026-12-01T08:00:00+00:00" and item.image_url == "https://n.example/i.jpg"
    assert (
        await DdgsEngine(searcher=Searcher(DDGSException("No results found."))).search(query, 5)
        == []
    )
    with pytest.raises(SearchFailed, match="Ratelimit"):
        await DdgsEngine(searcher=Searcher(DDGSException("Ratelimit: 202"))).search(query, 5)
    with pytest.raises(SearchTimedOut):
        await DdgsEngine(searcher=Searcher(TimeoutException("timed out"))).search(query, 5)
    started = time.monotonic()
    with pytest.raises(SearchTimedOut):
        await DdgsEngine(searcher=Searcher(text, sleep_s=1.5)).search(query, 0.3)
    assert time.monotonic() - started < 1.0  # the deadline, not the engines' time


def test_a_language_becomes_a_ddgs_region() -> None:
    assert [region_of(x) for x in (None, "de", "en", "en-GB", "pt_BR", "ja")] == [
        "wt-wt",
        "de-de",
        "us-en",
        "gb-en",
        "br-pt",
        "jp-jp",
    ]


async def test_the_real_ddgs_from_this_machine_answers_clearly_within_the_timeout() -> None:
    """ddgs itself, unmocked: with internet the results, without it (CI) a 502 or 504 naming
    the engines' failure, in either case within the request's timeout."""
    settings = DispatcherSettings(auth_mode="none", search_provider="ddgs")
    async with memory_client(MemoryJobStore(), settings) as api:
        started = time.monotonic()
        answer = await asyncio.wait_for(
            api.post("/v2/search", json={"query": "scrapejobs", "limit": 2, "timeout": 3000}),
            timeout=10,
        )
        took = time.monotonic() - started
    assert took < 4.5, took
    if answer.status_code == 200:
        assert all(r["url"].startswith("http") for r in answer.json()["data"]["web"])
    else:
        assert answer.status_code in (502, 504), answer.text
        assert "search" in answer.json()["error"]  # Firecrawl's shape: the reason, said
