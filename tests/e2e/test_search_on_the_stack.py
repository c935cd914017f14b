"""Search on the real stack (emulators, a dispatcher and a worker of their own project, the
local site, a SearXNG stand-in on loopback speaking its documented JSON API): firecrawl-py
unmodified searches, with ``scrape_options`` scrapes the results through the queue, asks news;
``/v1/search`` answers v1's list; a result naming the metadata server is never fetched and its
Document says why; the provider gone is a clear 502 within the request's time; a monitor of a
query finds on its second check only the results that are new."""

from __future__ import annotations

import time
import uuid
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest
from firecrawl import Firecrawl
from firecrawl.v2.types import Document, ScrapeOptions

from scrapejobs_devstack.searxng_standin import SearxngStandin, result
from scrapejobs_devstack.stack import Stack
from support.lone_stack import lone_stack
from support.site import Site

pytestmark = [pytest.mark.emulators, pytest.mark.stack]
METADATA = "http://169.254.169.254/computeMetadata/v1/"


@pytest.fixture(scope="module")
def standin() -> Iterator[SearxngStandin]:
    running = SearxngStandin(slow_s=3.0)
    yield running
    running.stop()


@pytest.fixture(scope="module")
def search_stack(
    stack: Stack, standin: SearxngStandin, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[Stack]:
    logs: Path = tmp_path_factory.mktemp("search-logs")
    # searches answered afresh each time: a monitor's second check finds what was added since
    env = {"SCRAPEJOBS_SEARXNG_URL": standin.url, "SCRAPEJOBS_SEARCH_CACHE_S": "0"}
    with lone_stack(stack, "scrapejobs-search", logs, env) as lone:
        yield lone


def test_firecrawl_py_searches_scrapes_the_results_and_asks_news(
    search_stack: Stack, standin: SearxngStandin, site: Site
) -> None:
    query = f"articles {uuid.uuid4().hex[:6]}"
    pages = [f"{site.url}/article/{uuid.uuid4().int % 10_000 + n}" for n in range(3)]
    standin.results[query] = [
        *(result(url, f"Article {n}", f"The article {n}") for n, url in enumerate(pages)),
        result(METADATA, "The metadata server"),
    ]
    standin.results[f"{query} news"] = [
        result(pages[0], "Breaking", "It happened", publishedDate="2026-12-01", category="news")
    ]
    app = Firecrawl(api_key="fc-local", api_url=search_stack.config.dispatcher_url)
    usage_url = f"{search_stack.config.dispatcher_url}/v1/usage"
    [before] = httpx.get(usage_url, timeout=30).json()["usage"]

    found = app.search(query, limit=3)
    assert [hit.url for hit in found.web or []] == pages

    scraped = app.search(query, limit=4, scrape_options=ScrapeOptions(formats=["markdown"]))
    documents = [hit for hit in scraped.web or [] if isinstance(hit, Document)]
    assert len(documents) == 3 and all(doc.markdown for doc in documents)
    assert {doc.metadata.source_url for doc in documents} == set(pages)

    news = app.search(f"{query} news", sources=["news"])
    assert [(hit.title, hit.snippet, hit.date) for hit in news.news or []] == [
        ("Breaking", "It happened", "2026-12-01")
    ]

    raw = httpx.post(
        f"{search_stack.config.dispatcher_url}/v2/search",
        json={"query": query, "limit": 4, "scrapeOptions": {"formats": ["markdown"]}},
        timeout=60,
    ).json()
    [inside] = [item for item in raw["data"]["web"] if item["url"] == METADATA]
    assert "markdown" not in inside
    assert inside["metadata"]["error"].startswith("blocked_destination")

    v1 = httpx.post(
        f"{search_stack.config.dispatcher_url}/v1/search",
        json={"query": query, "limit": 2, "lang": "en", "country": "us"},
        timeout=30,
    ).json()
    assert v1["success"] and [item["url"] for item in v1["data"]] == pages[:2]
    # five searches, each charged a credit (under ten results) in Firestore's stats shards
    [after] = httpx.get(usage_url, timeout=30).json()["usage"]
    assert after["searches"] - before["searches"] == 5
    assert after["search_credits"] - before["search_credits"] == 5


def test_the_provider_gone_or_slow_is_a_clear_error_within_the_time(
    search_stack: Stack, standin: SearxngStandin
) -> None:
    url = f"{search_stack.config.dispatcher_url}/v2/search"
    # the stand-in answers after 3 s: a 504 is the request's 1 s held, not the provider's time
    slow = httpx.post(url, json={"query": "slow", "timeout": 1000}, timeout=30)
    assert slow.status_code == 504 and "did not answer within 1 s" in slow.json()["error"]
    broken = httpx.post(url, json={"query": "broken"}, timeout=30)
    assert broken.status_code == 502 and "HTTP 500" in broken.json()["error"]


def test_a_monitor_of_a_query_reports_only_the_new_results_on_its_second_check(
    search_stack: Stack, standin: SearxngStandin, site: Site
) -> None:
    query = f"watched {uuid.uuid4().hex[:6]}"
    pages = [f"{site.url}/article/{uuid.uuid4().int % 10_000 + n}" for n in range(3)]
    standin.results[query] = [result(url, f"Article {n}") for n, url in enumerate(pages[:2])]
    with httpx.Client(base_url=search_stack.config.dispatcher_url, timeout=30) as api:
        made = api.post(
            "/v1/monitors",
            json={
                "name": "a query",
                "search": {"query": query, "limit": 5},
                "schedule": {"text": "daily at 9:00", "timezone": "UTC"},
            },
        )
        assert made.status_code == 201, made.text
        monitor_id = made.json()["id"]
        first = _checked(api, monitor_id)
        assert first == {pages[0]: "new", pages[1]: "new"}
        standin.results[query].append(result(pages[2], "Article 2"))  # found since
        second = _checked(api, monitor_id)
    assert second == {pages[0]: "same", pages[1]: "same", pages[2]: "new"}


def _checked(api: httpx.Client, monitor_id: str) -> dict[str, str]:
    """Run a check to its end: its pages' statuses by URL."""
    started = api.post(f"/v1/monitors/{monitor_id}:run")
    assert started.status_code == 201, started.text
    check_id = started.json()["id"]
    deadline = time.monotonic() + 90
    while True:
        check = api.get(f"/v1/monitors/{monitor_id}/checks/{check_id}").json()
        if check["status"] in ("completed", "partial", "failed"):
            break
        assert time.monotonic() < deadline, check
        time.sleep(0.3)
    assert check["status"] == "completed", check
    listed = api.get(
        f"/v1/monitors/{monitor_id}/checks/{check_id}/pages", params={"page_size": 100}
    )
    return {page["url"]: page["status"] for page in listed.json()["pages"]}
