"""Firecrawl's own Python SDK (firecrawl-py, pinned in the dev group, unmodified) against the
/v2 API of the emulator stack: scrape (markdown without navigation or footer, cleaned html, raw
html, links, metadata), a batch of 150 URLs waited for and paged through, cancel, errors
(a bad URL, the metadata server, an unknown id), a page that answered 404, and crawls (their
section of the site, robots.txt, queries ignored, errors, the active list, cancel) and map
(sitemaps, an index robots.txt names, the page's links, robots.txt, search, limit)."""

from __future__ import annotations

import time
import uuid
from collections.abc import Iterator

import httpx
import pytest
from firecrawl import Firecrawl
from firecrawl.v2.utils.error_handler import (
    BadRequestError,
    FirecrawlError,
    WebsiteNotSupportedError,
)

from scrapejobs_devstack.stack import Stack
from support.site import Site

pytestmark = [pytest.mark.emulators, pytest.mark.stack]


@pytest.fixture(scope="module")
def firecrawl(stack: Stack) -> Iterator[Firecrawl]:
    yield Firecrawl(api_key="fc-local", api_url=stack.config.dispatcher_url)


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
    with pytest.raises(BadRequestError, match="actions"):
        firecrawl.scrape("https://example.com/", actions=[{"type": "wait", "milliseconds": 1}])


def test_a_crawl_stays_in_its_section_honours_robots_and_is_paged(
    firecrawl: Firecrawl, site: Site
) -> None:
    job = firecrawl.crawl(
        f"{site.url}/fc/",
        limit=20,
        ignore_query_parameters=True,
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


def test_a_crawl_s_errors_and_cancel(firecrawl: Firecrawl, site: Site, stack: Stack) -> None:
    started = firecrawl.start_crawl(f"{site.url}/fc/", limit=20)
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
