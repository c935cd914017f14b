"""Firecrawl's own Python SDK (firecrawl-py, pinned in the dev group, unmodified) against the
/v2 API of the emulator stack: scrape (markdown without navigation or footer, cleaned html, raw
html, links, metadata), a batch of 150 URLs waited for and paged through, cancel, errors
(a bad URL, the metadata server, an unknown id), a page that answered 404, and crawls (their
section of the site, robots.txt, queries ignored, errors, the active list, cancel) and map
(sitemaps, an index robots.txt names, the page's links, robots.txt, search, limit), and
webhooks (started, each page, completed, in Firecrawl's body, verified as Firecrawl's
documentation verifies them, retried with the same webhookId)."""

from __future__ import annotations

import time
import uuid
from collections.abc import Iterator

import httpx
import pytest
from firecrawl import Firecrawl
from firecrawl.v2.types import WebhookConfig
from firecrawl.v2.utils.error_handler import (
    BadRequestError,
    FirecrawlError,
    WebsiteNotSupportedError,
)

from scrapejobs_devstack.stack import DEV_WEBHOOK_SECRET, Stack
from support.site import Site
from support.webhook_receiver import Received, WebhookReceiver

pytestmark = [pytest.mark.emulators, pytest.mark.stack]


@pytest.fixture
def receiver() -> Iterator[WebhookReceiver]:
    # Firecrawl's webhooks name no secret: the deployment's signs (make dev's: its dev key)
    receiver = WebhookReceiver(DEV_WEBHOOK_SECRET, firecrawl=True).start()
    yield receiver
    receiver.stop()


def received(
    receiver: WebhookReceiver, path: str, last: str, timeout_s: float = 90
) -> list[Received]:
    """Every delivery to ``path`` once one of type ``last`` verified (and a moment more)."""
    deadline = time.monotonic() + timeout_s
    while not any(r.payload and r.payload["type"] == last for r in receiver.for_path(path)):
        assert time.monotonic() < deadline, receiver.for_path(path)
        time.sleep(0.2)
    time.sleep(2)  # pages announced after the end may still be on their way
    return receiver.for_path(path)


def test_scrape_gives_the_document_firecrawl_users_read(firecrawl: Firecrawl, site: Site) -> None:
    url = f"{site.url}/article/7?t={uuid.uuid4().hex[:6]}"
    doc = firecrawl.scrape(url, formats=["markdown", "html", "rawHtml", "links"], timeout=20000)

    assert doc.markdown is not None and doc.markdown.startswith("# Story 7")
    assert "## Background" in doc.markdown and f"({site.url}/product/7)" in doc.markdown
    for chrome in ("NAV-HOME", "SIDEBAR-POPULAR", "FOOTER-COPYRIGHT", "We use cookies"):
        assert chrome not in doc.markdown
    assert doc.html is not None and "<h1>Story 7</h1>" in doc.html
    assert "SCRIPT-TEXT" not in doc.html and "NAV-HOME" not in doc.html
    assert doc.raw_html is not None and "SCRIPT-TEXT" in doc.raw_html
    assert doc.links is not None and f"{site.url}/product/7" in doc.links
    meta = doc.metadata_typed
    assert meta.title == "Article 7 | The Daily Test" and meta.language == "en"
    assert meta.description == "What happened in story 7."
    assert meta.og_title == "Story 7" and meta.og_site_name == "The Daily Test"
    assert meta.dc_terms_created == "2026-11-01"
    assert meta.source_url == url and meta.url == url
    assert meta.status_code == 200 and meta.content_type == "text/html"


def test_only_main_content_and_the_tags_select_what_the_markdown_holds(
    firecrawl: Firecrawl, site: Site
) -> None:
    url = f"{site.url}/kinds/article?t={uuid.uuid4().hex[:6]}"
    main = firecrawl.scrape(url, formats=["markdown"], timeout=20000).markdown
    assert main is not None and main.startswith("# How rivers carve canyons\n")
    for word in ("KEEPLEAD", "KEEPLAST", "KEEPTD"):
        assert word in main
    for word in ("DROPNAV", "DROPRELATED", "DROPCOMMENT", "DROPSHARE", "DROPNEWSLETTER"):
        assert word not in main
    whole = firecrawl.scrape(url, formats=["markdown"], only_main_content=False, timeout=20000)
    assert whole.markdown is not None
    for word in ("DROPNAV", "DROPRELATED", "DROPCOMMENT", "DROPFOOTER", "KEEPLEAD"):
        assert word in whole.markdown
    comments = firecrawl.scrape(url, formats=["markdown"], include_tags=["#comments"])
    assert comments.markdown is not None and "DROPCOMMENT" in comments.markdown
    assert "KEEPLEAD" not in comments.markdown
    trimmed = firecrawl.scrape(url, formats=["markdown"], exclude_tags=["table", "ul"])
    assert trimmed.markdown is not None and "KEEPLEAD" in trimmed.markdown
    assert "KEEPTD" not in trimmed.markdown and "KEEPLIST1" not in trimmed.markdown


def test_a_page_that_answered_an_error_is_a_document_saying_so(
    firecrawl: Firecrawl, site: Site
) -> None:
    doc = firecrawl.scrape(f"{site.url}/status/404/{uuid.uuid4().hex[:6]}", timeout=20000)
    meta = doc.metadata_typed
    assert meta.status_code == 404 and meta.error


def test_a_batch_of_150_is_waited_for_and_paged_through(firecrawl: Firecrawl, site: Site) -> None:
    tag = uuid.uuid4().hex[:6]
    urls = [f"{site.url}/product/{n}?t={tag}" for n in range(300, 450)]

    job = firecrawl.batch_scrape(urls, formats=["markdown"], poll_interval=1, wait_timeout=120)

    assert job.status == "completed" and job.total == 150 and job.completed == 150
    assert len(job.data) == 150  # every page of results, followed through next
    sources = {d.metadata_typed.source_url for d in job.data}
    assert sources == set(urls)
    assert all(d.markdown and d.markdown.startswith("# Product") for d in job.data)


def test_a_batch_s_errors_list_robots_refusals_apart(firecrawl: Firecrawl, site: Site) -> None:
    tag = uuid.uuid4().hex[:6]
    fine, private = f"{site.url}/product/1?t={tag}", f"{site.url}/robots-private/{tag}"
    broken = f"{site.url}/status/404/{tag}"
    started = firecrawl.start_batch_scrape([fine, private, broken], formats=["markdown"])
    deadline = time.monotonic() + 120
    while (status := firecrawl.get_batch_scrape_status(started.id)).status == "scraping":
        assert time.monotonic() < deadline, status
        time.sleep(0.5)
    assert status.status == "completed" and status.completed == 3
    assert [d.metadata_typed.source_url for d in status.data] == [fine]
    errors = firecrawl.get_batch_scrape_errors(started.id)
    assert errors.robots_blocked == [private]
    assert [e.url for e in errors.errors] == [broken] and errors.errors[0].error


def test_a_batch_can_be_cancelled(firecrawl: Firecrawl, site: Site, stack: Stack) -> None:
    tag = uuid.uuid4().hex[:6]
    urls = [f"{site.url}/slow/{n}?s=1&times=1&t={tag}" for n in range(40)]
    started = firecrawl.start_batch_scrape(urls)
    assert started.id and started.url.endswith(f"/v2/batch/scrape/{started.id}")

    assert firecrawl.cancel_batch_scrape(started.id) is True
    status = firecrawl.get_batch_scrape_status(started.id)
    assert status.status == "cancelled" and status.total == 40
    settled(stack.config.dispatcher_url, started.id)


def test_errors_arrive_as_the_sdk_s_exceptions(firecrawl: Firecrawl) -> None:
    with pytest.raises(BadRequestError, match="url"):
        firecrawl.scrape("not a url")
    with pytest.raises(WebsiteNotSupportedError, match="blocked_destination"):
        firecrawl.scrape("http://169.254.169.254/computeMetadata/v1/", timeout=20000)
    with pytest.raises(FirecrawlError) as missing:
        firecrawl.get_batch_scrape_status("0123abcd0123abcd")
    assert missing.value.status_code == 404
    with pytest.raises(BadRequestError, match="actions"):  # a wait needs what it waits for
        firecrawl.scrape("https://example.com/", actions=[{"type": "wait"}])


def test_a_crawl_stays_in_its_section_honours_robots_and_is_paged(
    firecrawl: Firecrawl, site: Site
) -> None:
    job = firecrawl.crawl(
        f"{site.url}/fc/",
        limit=20,
        ignore_query_parameters=True,
        sitemap="skip",
        formats=["markdown", "links"],
        poll_interval=1,
        timeout=120,
    )

    assert job.status == "completed", job
    found = {d.metadata_typed.source_url for d in job.data}
    section = {f"{site.url}/fc/{path}" for path in ("", "a", "b", "a/1")}
    assert found == section  # /other/x is outside /fc/; ?ref= variants are one page
    assert all(d.markdown and d.markdown.startswith("# Page /fc/") for d in job.data)
    assert job.total == 5 and job.completed == 5  # and the page robots.txt keeps out


def test_a_crawl_reads_the_site_s_sitemaps_unless_told_not_to(
    firecrawl: Firecrawl, site: Site
) -> None:
    def crawled(**options: object) -> set[str]:
        job = firecrawl.crawl(
            f"{site.url}/fc/",
            limit=20,
            ignore_query_parameters=True,
            poll_interval=1,
            timeout=120,
            **options,
        )
        assert job.status == "completed", job
        return {d.metadata_typed.source_url for d in job.data}

    section = {f"{site.url}/fc/{path}" for path in ("", "a", "b", "a/1")}
    listed = {f"{site.url}/fc/hidden", f"{site.url}/fc/extra"}  # /fc/private/y: robots.txt
    assert crawled() == section | listed  # Firecrawl's default: sitemap include
    only = {f"{site.url}/fc/", f"{site.url}/fc/a", *listed}  # no links followed
    assert crawled(sitemap="only") == only


def test_a_crawl_s_errors_and_cancel(firecrawl: Firecrawl, site: Site, stack: Stack) -> None:
    started = firecrawl.start_crawl(f"{site.url}/fc/", limit=20, sitemap="skip")
    assert started.url.endswith(f"/v2/crawl/{started.id}")
    deadline = time.monotonic() + 120
    while (status := firecrawl.get_crawl_status(started.id)).status == "scraping":
        assert time.monotonic() < deadline, status
        time.sleep(0.5)
    errors = firecrawl.get_crawl_errors(started.id)
    assert errors.robots_blocked == [f"{site.url}/fc/private/x"] and errors.errors == []

    slow = firecrawl.start_crawl(f"{site.url}/slowlinks/{uuid.uuid4().hex[:6]}?s=3", limit=50)
    active = firecrawl.get_active_crawls().crawls
    assert any(c.id == slow.id for c in active), (
        slow.id,
        active,
        firecrawl.get_crawl_status(slow.id),
    )
    assert firecrawl.cancel_crawl(slow.id) is True
    assert firecrawl.get_crawl_status(slow.id).status == "cancelled"
    settled(stack.config.dispatcher_url, slow.id)


def test_map_lists_the_site_from_its_sitemaps_and_page_honouring_robots(
    firecrawl: Firecrawl, site: Site
) -> None:
    start = f"{site.url}/fc/"
    found = [link.url for link in firecrawl.map(start, limit=100).links]

    assert found[0] == start and len(found) == len(set(found))
    expected = {
        start,
        *(f"{site.url}{path}" for path in ("/fc/a", "/fc/b", "/other/x")),  # the page's links
        f"{site.url}/fc/hidden",  # only in /sitemap.xml
        f"{site.url}/fc/extra",  # in a sitemap of the index robots.txt names
    }
    assert set(found) == expected  # no /fc/private/ (robots.txt), no ?query

    assert [link.url for link in firecrawl.map(start, search="EXTRA").links] == [
        f"{site.url}/fc/extra"
    ]
    page_only = {link.url for link in firecrawl.map(start, sitemap="skip").links}
    assert page_only == expected - {f"{site.url}/fc/hidden", f"{site.url}/fc/extra"}
    assert len(firecrawl.map(start, limit=2).links) == 2


def test_map_of_a_refused_destination_is_an_error(firecrawl: Firecrawl) -> None:
    with pytest.raises(FirecrawlError) as refused:
        firecrawl.map("http://169.254.169.254/latest/", sitemap="skip")
    assert refused.value.status_code == 403


def settled(api_url: str, job_id: str) -> None:
    """Wait until a cancelled job's fetches under way have ended, so that no later test (the
    stats' exact counts) sees them finish."""
    deadline = time.monotonic() + 60
    while True:
        counts = httpx.get(f"{api_url}/v1/jobs/{job_id}", timeout=10).json()["counts"]
        if not counts.get("running") and not counts.get("queued"):
            return
        assert time.monotonic() < deadline, counts
        time.sleep(0.2)


def test_a_crawl_s_webhook_gets_its_start_each_page_and_its_end(
    firecrawl: Firecrawl, site: Site, receiver: WebhookReceiver
) -> None:
    hook = WebhookConfig(url=f"{receiver.url}/crawl", metadata={"run": "r7"})
    started = firecrawl.start_crawl(
        f"{site.url}/fc/", limit=20, ignore_query_parameters=True, sitemap="skip", webhook=hook
    )

    deliveries = received(receiver, "/crawl", "crawl.completed")
    assert all(d.payload is not None for d in deliveries), deliveries  # every one verified
    bodies = [d.payload for d in deliveries if d.payload]
    assert all(b["id"] == started.id and b["metadata"] == {"run": "r7"} for b in bodies)
    kinds = [b["type"] for b in bodies]
    assert kinds[0] == "crawl.started" and kinds.count("crawl.completed") == 1
    pages = [b for b in bodies if b["type"] == "crawl.page"]
    fetched = {b["data"][0]["metadata"]["sourceURL"]: b["data"][0] for b in pages if b["success"]}
    assert set(fetched) == {f"{site.url}/fc/{path}" for path in ("", "a", "b", "a/1")}
    assert all(doc["markdown"].startswith("# Page /fc/") for doc in fetched.values())
    [blocked] = [b for b in pages if not b["success"]]  # the page robots.txt keeps out
    assert blocked["data"][0]["metadata"]["sourceURL"] == f"{site.url}/fc/private/x"
    assert blocked["error"]
    assert len({b["webhookId"] for b in bodies}) == len(bodies) == 7


def test_a_batch_s_webhook_is_retried_with_the_same_webhook_id(
    firecrawl: Firecrawl, site: Site, receiver: WebhookReceiver
) -> None:
    receiver.fail_first["/batch"] = 1
    tag = uuid.uuid4().hex[:6]
    urls = [f"{site.url}/product/{n}?t={tag}" for n in range(3)]
    hook = WebhookConfig(url=f"{receiver.url}/batch", events=["started", "completed"])
    started = firecrawl.start_batch_scrape(urls, formats=["markdown"], webhook=hook)

    deliveries = received(receiver, "/batch", "batch_scrape.completed")
    first, *rest = deliveries
    assert first.answered == 500 and first.payload is not None
    kinds = [d.payload["type"] for d in rest if d.payload]
    assert sorted(kinds) == ["batch_scrape.completed", "batch_scrape.started"]
    retried = [d for d in rest if d.webhook_id == first.webhook_id]
    assert [d.answered for d in retried] == [204]  # the same event, delivered on its retry
    assert all(d.payload and d.payload["id"] == started.id for d in deliveries)


def test_max_age_reuses_pages_an_earlier_batch_kept(firecrawl: Firecrawl, site: Site) -> None:
    tag = uuid.uuid4().hex[:6]
    urls = [f"{site.url}/product/{n}?t={tag}" for n in range(20, 25)]
    first = firecrawl.batch_scrape(urls, formats=["markdown"], poll_interval=1, wait_timeout=60)
    assert {d.metadata_typed.cache_state for d in first.data} == {"miss"}
    fetched = [site.count(f"/product/{n}") for n in range(20, 25)]

    again = firecrawl.batch_scrape(urls, formats=["markdown"], poll_interval=1, wait_timeout=60)
    assert [site.count(f"/product/{n}") for n in range(20, 25)] == fetched  # no fetch
    assert {d.metadata_typed.cache_state for d in again.data} == {"hit"}
    assert all(d.metadata_typed.cached_at for d in again.data)
    assert sorted(d.markdown for d in again.data) == sorted(d.markdown for d in first.data)

    fresh = firecrawl.batch_scrape(
        urls, formats=["markdown"], max_age=0, poll_interval=1, wait_timeout=60
    )
    assert {d.metadata_typed.cache_state for d in fresh.data} == {"miss"}
    assert [site.count(f"/product/{n}") for n in range(20, 25)] == [n + 1 for n in fetched]


ATTRIBUTES = {
    "type": "attributes",
    "selectors": [
        {"selector": "nav a", "attribute": "href"},
        {"selector": "html", "attribute": "lang"},
        {"selector": "p", "attribute": "data-none"},
    ],
}
FOUND_ATTRIBUTES = [
    {"selector": "nav a", "attribute": "href", "values": ["/", "/world"]},
    {"selector": "html", "attribute": "lang", "values": ["en"]},
    {"selector": "p", "attribute": "data-none", "values": []},
]


def test_the_attributes_format_reads_what_its_selectors_match(
    firecrawl: Firecrawl, site: Site, stack: Stack
) -> None:
    """firecrawl-py sends the format as it is; its Document (4.x) has no ``attributes`` field, so
    the answer it parsed is read again as Firecrawl's JS SDK reads it, and the native API gives
    the same list."""
    url = f"{site.url}/article/8?t={uuid.uuid4().hex[:6]}"
    doc = firecrawl.scrape(url, formats=["markdown", ATTRIBUTES], timeout=20000)
    assert doc.markdown is not None and doc.markdown.startswith("# Story 8")
    api = stack.config.dispatcher_url
    answer = httpx.post(f"{api}/v2/scrape", json={"url": url, "formats": [ATTRIBUTES]}, timeout=30)
    assert answer.status_code == 200, answer.text
    assert answer.json()["data"]["attributes"] == FOUND_ATTRIBUTES
    native = httpx.post(
        f"{api}/v1/scrape", json={"url": url, "options": {"formats": [ATTRIBUTES]}}, timeout=30
    )
    assert native.status_code == 200, native.text
    assert native.json()["result"]["data"]["attributes"] == FOUND_ATTRIBUTES

    batch = firecrawl.batch_scrape([url, f"{url}&b=1"], formats=[ATTRIBUTES], wait_timeout=60)
    assert batch.status == "completed" and len(batch.data) == 2
    bad = {"type": "attributes", "selectors": [{"selector": "a[", "attribute": "href"}]}
    with pytest.raises(BadRequestError, match="invalid CSS selector"):
        firecrawl.scrape(url, formats=[bad])
