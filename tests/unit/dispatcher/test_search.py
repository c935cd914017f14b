"""Search (dispatcher search/, firecrawl/search_*): SearXNG's JSON API read as its docs write
it (a stand-in on loopback), pages read until the limit, the json format not enabled said as
such; ``/v2/search`` and ``/v1/search`` in Firecrawl's shapes; no provider a 503 naming the
setting, a failing provider a 502, a slow one a 504 within the request's time; a tenant's
answer kept a while for that tenant alone; domains included and excluded."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from scrapejobs_devstack.searxng_standin import SearxngStandin, result
from scrapejobs_dispatcher.search.searxng_engine import SearxngEngine
from scrapejobs_dispatcher.search.web_search import SearchAsk, WebSearch
from scrapejobs_dispatcher.settings import DispatcherSettings
from scrapejobs_shared.adapters.memory.job_store import MemoryJobStore
from scrapejobs_shared.ports.search_engine import (
    SearchFailed,
    SearchHit,
    SearchQuery,
    SearchTimedOut,
)
from support.memory_dispatcher import memory_client


@pytest.fixture
def standin() -> Iterator[SearxngStandin]:
    running = SearxngStandin(slow_s=2.0)
    running.results["rust web frameworks"] = [
        result(f"https://site{n}.example/page", f"Framework {n}", f"About framework {n}")
        for n in range(25)
    ]
    running.results["election"] = [
        result(
            "https://news.example/a",
            "Results are in",
            "Counting ended",
            publishedDate="2026-11-30T08:00:00",
            img_src="https://news.example/a.jpg",
            category="news",
        )
    ]
    yield running
    running.stop()


async def test_the_engine_reads_pages_until_the_limit_and_sends_what_is_asked(
    standin: SearxngStandin,
) -> None:
    engine = SearxngEngine(standin.url)
    query = SearchQuery("rust web frameworks", "web", 15, (), "de", "week")
    hits = await engine.search(query, timeout_s=5)
    assert [hit.title for hit in hits] == [f"Framework {n}" for n in range(15)]
    assert hits[0] == SearchHit(
        "https://site0.example/page", "Framework 0", "About framework 0", category="general"
    )
    assert [asked["pageno"] for asked in standin.asked] == ["1", "2"]
    first = standin.asked[0]
    assert (first["format"], first["categories"], first["language"], first["time_range"]) == (
        "json",
        "general",
        "de",
        "week",
    )
    [news] = await engine.search(SearchQuery("election", "news"), timeout_s=5)
    assert (news.date, news.image_url) == ("2026-11-30T08:00:00", "https://news.example/a.jpg")
    assert standin.asked[-1]["categories"] == "news"


async def test_the_engine_says_why_a_provider_failed(standin: SearxngStandin) -> None:
    engine = SearxngEngine(standin.url)
    with pytest.raises(SearchFailed, match="HTTP 500"):
        await engine.search(SearchQuery("broken"), timeout_s=5)
    with pytest.raises(SearchTimedOut, match=r"within 0\.3 s"):
        await engine.search(SearchQuery("slow"), timeout_s=0.3)
    standin.json_enabled = False
    with pytest.raises(SearchFailed, match=r"search\.formats"):
        await engine.search(SearchQuery("x"), timeout_s=5)
    with pytest.raises(SearchFailed, match="could not be reached"):
        await SearxngEngine("http://127.0.0.1:9").search(SearchQuery("x"), timeout_s=5)


class Counting:
    def __init__(self) -> None:
        self.asked: list[SearchQuery] = []

    async def search(self, query: SearchQuery, timeout_s: float) -> list[SearchHit]:
        self.asked.append(query)
        hosts = ["docs.python.org", "python.org", "evil.example", "sub.python.org", "x.org"]
        return [SearchHit(f"https://{host}/{query.text}") for host in hosts][: query.limit]


async def test_answers_are_kept_per_tenant_and_domains_filter_the_results() -> None:
    engine = Counting()
    now = [0.0]
    searches = WebSearch(engine, cache_s=60, clock=lambda: now[0])
    ask = SearchAsk((("", SearchQuery("q", limit=2)),), limit=2)
    first = await searches.find("acme", ask, 5)
    assert await searches.find("acme", ask, 5) is first and len(engine.asked) == 1
    await searches.find("other", ask, 5)  # never another tenant's answer
    now[0] = 61
    await searches.find("acme", ask, 5)
    assert len(engine.asked) == 3
    within = SearchAsk(
        (("", SearchQuery("p", limit=4)),),
        limit=4,
        include_domains=("python.org",),
        exclude_domains=("docs.python.org",),
    )
    found = await searches.find("acme", within, 5)
    assert [hit.url for hit in found.hits()] == ["https://python.org/p", "https://sub.python.org/p"]
    assert engine.asked[-1].limit == 12  # asked wider: some were to be left out


async def test_v2_and_v1_search_answer_in_firecrawl_s_shapes(standin: SearxngStandin) -> None:
    standin.results["rust web frameworks site:github.com"] = [
        result("https://github.com/a/framework", "a/framework")
    ]
    settings = DispatcherSettings(auth_mode="none", searxng_url=standin.url)
    async with memory_client(MemoryJobStore(), settings) as api:
        v2 = await api.post("/v2/search", json={"query": "rust web frameworks", "limit": 3})
        news = await api.post(
            "/v2/search", json={"query": "election", "sources": [{"type": "news"}], "tbs": "qdr:d"}
        )
        v1 = await api.post(
            "/v1/search",
            json={"query": "rust web frameworks", "limit": 2, "lang": "en", "country": "us"},
        )
        github = await api.post(
            "/v2/search", json={"query": "rust web frameworks", "categories": ["github"]}
        )
    assert v2.status_code == 200, v2.text
    body = v2.json()
    assert body["success"] and body["creditsUsed"] == 1
    assert body["data"]["web"][0] == {
        "url": "https://site0.example/page",
        "title": "Framework 0",
        "description": "About framework 0",
        "position": 1,
    }
    assert len(body["data"]["web"]) == 3
    assert news.json()["data"]["news"] == [
        {
            "title": "Results are in",
            "url": "https://news.example/a",
            "snippet": "Counting ended",
            "date": "2026-11-30T08:00:00",
            "imageUrl": "https://news.example/a.jpg",
            "position": 1,
        }
    ]
    assert v1.status_code == 200 and [r["title"] for r in v1.json()["data"]] == [
        "Framework 0",
        "Framework 1",
    ]
    assert any(asked.get("language") == "en-US" for asked in standin.asked)
    assert any(asked.get("time_range") == "day" for asked in standin.asked)
    assert github.status_code == 200
    assert standin.asked[-1]["q"] == "rust web frameworks site:github.com"
    assert {item["category"] for item in github.json()["data"]["web"]} == {"github"}


async def test_no_provider_a_failing_one_and_a_slow_one_answer_clearly(
    standin: SearxngStandin,
) -> None:
    async with memory_client(MemoryJobStore(), DispatcherSettings(auth_mode="none")) as api:
        none = await api.post("/v2/search", json={"query": "anything"})
    assert none.status_code == 503
    assert "SCRAPEJOBS_SEARXNG_URL" in none.json()["error"]
    settings = DispatcherSettings(auth_mode="none", searxng_url=standin.url)
    async with memory_client(MemoryJobStore(), settings) as api:
        broken = await api.post("/v2/search", json={"query": "broken"})
        slow = await api.post("/v2/search", json={"query": "slow", "timeout": 1000})
        refused = await api.post("/v2/search", json={"query": "x", "location": "Germany"})
        # scrape options this deployment does not run are refused whatever the results
        unserved = await api.post(
            "/v2/search",
            json={"query": "nothing", "scrapeOptions": {"formats": [{"type": "json"}]}},
        )
    assert unserved.status_code == 400 and unserved.json()["field"].startswith("scrapeOptions")
    assert not standin.asked or standin.asked[-1]["q"] != "nothing"  # refused before searching
    assert broken.status_code == 502 and "HTTP 500" in broken.json()["error"]
    assert slow.status_code == 504 and "within 1 s" in slow.json()["error"]
    assert refused.status_code == 400 and "location" in refused.text


async def test_results_to_scrape_are_one_job_and_the_answer_comes_at_the_timeout(
    standin: SearxngStandin,
) -> None:
    """No worker here: the job is made, nothing finishes, the answer at the timeout says so."""
    standin.results["mixed"] = [
        result("https://a.example/1", "One"),
        result("ftp://files.example/2", "Not a page"),
    ]
    store = MemoryJobStore()
    settings = DispatcherSettings(auth_mode="none", searxng_url=standin.url)
    async with memory_client(store, settings) as api:
        answer = await api.post(
            "/v2/search",
            json={"query": "mixed", "timeout": 1000, "scrapeOptions": {"formats": ["markdown"]}},
        )
        ignored = await api.post(
            "/v2/search", json={"query": "mixed", "ignoreInvalidURLs": True, "timeout": 1000}
        )
    assert answer.status_code == 200, answer.text
    [job] = store.jobs.values()
    assert job.labels == {"firecrawl": "search"} and job.total == 1
    warning = answer.json()["warning"]
    assert "ftp://files.example/2" in warning and f"job {job.id} goes on" in warning
    assert [r["url"] for r in ignored.json()["data"]["web"]] == ["https://a.example/1"]


async def test_a_native_job_of_a_search_scrapes_the_pages_it_found(
    standin: SearxngStandin,
) -> None:
    standin.results["mixed"] = [
        result("https://a.example/1", "One"),
        result("ftp://files.example/2", "Not a page"),
        result("https://a.example/1", "One again"),
        result("https://b.example/3", "Three"),
    ]
    store = MemoryJobStore()
    settings = DispatcherSettings(auth_mode="none", searxng_url=standin.url)
    async with memory_client(store, settings) as api:
        made = await api.post("/v1/jobs", json={"search": {"query": "mixed", "limit": 4}})
        nothing = await api.post("/v1/jobs", json={"search": {"query": "no such thing"}})
        both = await api.post("/v1/jobs", json={"search": {"query": "x"}, "url": "https://a.b/"})
    assert made.status_code == 202, made.text
    job = store.jobs[made.json()["id"]]
    assert job.total == 2
    assert nothing.status_code == 422 and nothing.json()["error"]["field"] == "search.query"
    assert both.status_code == 422 and "exactly one of" in both.text
    async with memory_client(MemoryJobStore(), DispatcherSettings(auth_mode="none")) as api:
        unserved = await api.post("/v1/jobs", json={"search": {"query": "mixed"}})
    assert unserved.status_code == 503 and "SCRAPEJOBS_SEARXNG_URL" in unserved.text


async def test_a_retried_search_job_replays_its_job_and_never_searches_again(
    standin: SearxngStandin,
) -> None:
    """The idempotency key's fingerprint is the request as it came: a retry after the answer
    is no longer kept, when the search would now find other pages, is the same job."""
    standin.results["retried"] = [result("https://a.example/1", "One")]
    store = MemoryJobStore()
    settings = DispatcherSettings(auth_mode="none", searxng_url=standin.url, search_cache_s=0)
    body = {"search": {"query": "retried"}}
    async with memory_client(store, settings) as api:
        first = await api.post("/v1/jobs", json=body, headers={"Idempotency-Key": "k1"})
        standin.results["retried"].append(result("https://b.example/2", "Two"))
        again = await api.post("/v1/jobs", json=body, headers={"Idempotency-Key": "k1"})
        other = await api.post(
            "/v1/jobs",
            json={"search": {"query": "retried", "limit": 3}},
            headers={"Idempotency-Key": "k1"},
        )
    assert first.status_code == 202 and again.status_code == 202, again.text
    assert again.headers["Idempotent-Replayed"] == "true"
    assert again.json()["id"] == first.json()["id"] and len(store.jobs) == 1
    assert store.jobs[first.json()["id"]].total == 1
    searched = [a for a in standin.asked if a["q"] == "retried" and a["pageno"] == "1"]
    assert len(searched) == 1  # once, by the first request
    assert other.status_code == 422 and other.json()["error"]["code"] == "idempotency_key_reused"


async def test_each_search_is_metered_to_its_tenant_a_credit_a_started_ten_results(
    standin: SearxngStandin,
) -> None:
    """A kept answer is charged too (as Firecrawl charges each call); the credits are in the
    tenant's usage and Firecrawl's credit usage, never among its pages."""
    store = MemoryJobStore()
    settings = DispatcherSettings(auth_mode="none", searxng_url=standin.url)
    async with memory_client(store, settings) as api:
        for _ in range(2):  # the second answered from memory: charged all the same
            answer = await api.post("/v2/search", json={"query": "rust web frameworks"})
            assert answer.json()["creditsUsed"] == 1
        many = await api.post("/v2/search", json={"query": "rust web frameworks", "limit": 25})
        assert many.json()["creditsUsed"] == 3  # 25 results: three started tens
        await api.post("/v1/jobs", json={"search": {"query": "rust web frameworks"}})
        [usage] = (await api.get("/v1/usage")).json()["usage"]
        credits = (await api.get("/v2/team/credit-usage")).json()["data"]
        page = await api.get("/ui/tenants")
    assert page.status_code == 200 and "4 (6 credits)" in page.text  # the dashboard's Tenants
    assert usage["searches"] == 4 and usage["search_credits"] == 6
    assert usage["pages_today"] == 0  # nothing fetched: searches are not pages
    assert credits["creditsUsed"] == 6


async def test_a_monitor_of_a_query_needs_a_provider_and_is_listed_by_its_query(
    standin: SearxngStandin,
) -> None:
    monitor = {
        "search": {"query": "rust web frameworks", "limit": 3, "sources": ["news"]},
        "name": "framework news",
        "schedule": {"text": "hourly"},
    }
    async with memory_client(MemoryJobStore(), DispatcherSettings(auth_mode="none")) as api:
        refused = await api.post("/v1/monitors", json=monitor)
    assert refused.status_code == 503 and "SCRAPEJOBS_SEARXNG_URL" in refused.text
    settings = DispatcherSettings(auth_mode="none", searxng_url=standin.url)
    async with memory_client(MemoryJobStore(), settings) as api:
        made = await api.post("/v1/monitors", json=monitor)
        listed = await api.get("/ui/monitors")
    assert made.status_code == 201, made.text
    assert listed.status_code == 200 and "search for “rust web frameworks” (news, 3)" in listed.text


async def test_a_retried_submission_of_a_search_finds_its_job_without_searching_again(
    standin: SearxngStandin,
) -> None:
    """A monitor's check or a schedule's run is submitted again with its job's id when its
    first answer was lost: the job it made, neither searched nor charged again."""
    from scrapejobs_dispatcher.submission.submission import Submission
    from scrapejobs_shared.domain.jobspec import JobRequest
    from support.memory_dispatcher import memory_dispatcher

    standin.results["retried check"] = [result("https://a.example/1", "One")]
    store = MemoryJobStore()
    settings = DispatcherSettings(auth_mode="none", searxng_url=standin.url)
    app = memory_dispatcher(store, settings)
    async with app.router.lifespan_context(app):
        request = JobRequest.model_validate({"search": {"query": "retried check"}})
        submission = Submission(request, "acme", job_id="check-1", trigger="monitor m")
        first = await app.state.jobs.submit(submission)
        again = await app.state.jobs.submit(submission)
        usage = await app.state.quotas.usage("acme")
    assert first.created and not again.created and again.job.id == first.job.id == "check-1"
    assert len([a for a in standin.asked if (a["q"], a["pageno"]) == ("retried check", "1")]) == 1
    assert usage.searches == 1


async def test_the_dashboard_s_search_page_asks_the_provider_as_the_viewer_s_tenant(
    standin: SearxngStandin,
) -> None:
    store = MemoryJobStore()
    settings = DispatcherSettings(auth_mode="none", searxng_url=standin.url)
    async with memory_client(store, settings) as api:
        empty = await api.get("/ui/search")
        found = await api.get("/ui/search", params={"q": "election", "source": "news"})
        [usage] = (await api.get("/v1/usage")).json()["usage"]
    assert empty.status_code == 200 and "Provider: SearXNG" in empty.text
    assert found.status_code == 200 and 'href="https://news.example/a"' in found.text
    assert "Results are in" in found.text and "2026-11-30T08:00:00" in found.text
    assert standin.asked[-1]["categories"] == "news" and usage["searches"] == 1
    async with memory_client(MemoryJobStore(), DispatcherSettings(auth_mode="none")) as api:
        none = await api.get("/ui/search", params={"q": "election"})
    assert none.status_code == 503 and "SCRAPEJOBS_SEARXNG_URL" in none.text
    assert "No search provider is configured" in none.text
