"""Options that landed as option families (scrapejobs_shared/options), on the emulator stack
through Firecrawl's own SDK and the native API: ``location.languages`` reaches the site as
Accept-Language and the browser's locale; ``removeBase64Images`` keeps images written into the
page out of the markdown unless false; ``zeroDataRetention`` answers the page and leaves no
result document behind, and is refused where results are read later (a batch, a crawl)."""

from __future__ import annotations

import uuid

import httpx
import pytest
from firecrawl import Firecrawl
from firecrawl.v2.utils.error_handler import BadRequestError

from scrapejobs_shared.adapters.firestore.job_store import FirestoreJobStore
from support.site import WRITTEN_IN_PNG, Site

pytestmark = [pytest.mark.emulators, pytest.mark.stack]

GERMAN_FIRST = "ACCEPT-LANGUAGE: de-DE,en;q=0.9"


def test_languages_reach_the_site_as_accept_language(firecrawl: Firecrawl, site: Site) -> None:
    url = f"{site.url}/languages/plain-{uuid.uuid4().hex[:6]}"
    doc = firecrawl.scrape(
        url, formats=["rawHtml"], location={"languages": ["de-DE", "en"]}, timeout=20000
    )
    assert doc.raw_html is not None and GERMAN_FIRST in doc.raw_html
    assert "NAVIGATOR-UNKNOWN" in doc.raw_html  # fetched plainly: no script ran

    unasked = firecrawl.scrape(url + "-x", formats=["rawHtml"], timeout=20000)
    assert unasked.raw_html is not None and "ACCEPT-LANGUAGE: none" in unasked.raw_html


def test_a_rendered_page_is_asked_in_the_languages_and_read_by_a_browser_that_speaks_the_first(
    firecrawl: Firecrawl, site: Site, renderer: object
) -> None:
    url = f"{site.url}/languages/rendered-{uuid.uuid4().hex[:6]}"
    doc = firecrawl.scrape(
        url,
        formats=["rawHtml"],
        location={"languages": ["de-DE", "en"]},
        wait_for=50,  # renders
        timeout=30000,
    )
    assert doc.raw_html is not None and GERMAN_FIRST in doc.raw_html
    assert "NAVIGATOR-de-DE" in doc.raw_html


def test_remove_base64_images_keeps_images_written_into_the_page_out_of_the_markdown(
    firecrawl: Firecrawl, site: Site
) -> None:
    url = f"{site.url}/images/{uuid.uuid4().hex[:6]}"
    removed = firecrawl.scrape(url, formats=["markdown"], remove_base64_images=True, max_age=0)
    kept = firecrawl.scrape(url, formats=["markdown"], remove_base64_images=False, max_age=0)

    assert removed.markdown is not None and kept.markdown is not None
    assert removed.markdown.startswith("# A page with pictures")
    assert "data:" not in removed.markdown
    assert f"![written-in dot]({WRITTEN_IN_PNG})" in kept.markdown
    assert f"![linked chart]({site.url}/static/chart.png)" in kept.markdown


async def _results_of(store: FirestoreJobStore, url: str) -> int:
    """The documents that hold ``url``'s result: a job's task documents (at the root, or under
    the job), or the job itself (a one-page job keeps its batch and its result in its own
    document)."""
    found = 0
    async for job in store._client.collection("jobs").stream():
        found += url in str(job.to_dict())
        async for collection in job.reference.collections():
            async for document in collection.stream():
                found += url in str(document.to_dict())
    async for document in store._client.collection("tasks").stream():
        found += url in str(document.to_dict())
    return found


async def test_zero_data_retention_answers_the_page_and_keeps_nothing(
    api: httpx.AsyncClient, store: FirestoreJobStore, site: Site
) -> None:
    kept_url = f"{site.url}/article/3?zdr={uuid.uuid4().hex[:6]}"
    kept = await api.post("/v2/scrape", json={"url": kept_url, "timeout": 20000})
    assert kept.status_code == 200, kept.text
    assert await _results_of(store, kept_url) == 1  # what the check below would see

    url = f"{site.url}/article/3?zdr={uuid.uuid4().hex[:6]}"
    body = {"url": url, "timeout": 20000, "zeroDataRetention": True}
    answered = await api.post("/v2/scrape", json=body)

    assert answered.status_code == 200, answered.text
    assert answered.json()["data"]["markdown"].startswith("# Story 3")
    assert await _results_of(store, url) == 0

    native_url = f"{site.url}/article/4?zdr={uuid.uuid4().hex[:6]}"
    native = await api.post("/v1/scrape", json={"url": native_url, "zero_data_retention": True})
    assert native.status_code == 200, native.text
    assert native.json()["result"]["status"] == "succeeded"
    assert await _results_of(store, native_url) == 0
    gone = await api.get(f"/v1/jobs/{native.json()['job_id']}")
    assert gone.status_code == 404


def test_zero_data_retention_is_refused_where_results_are_read_later(
    firecrawl: Firecrawl, site: Site
) -> None:
    with pytest.raises(BadRequestError) as batch:
        firecrawl.start_batch_scrape([f"{site.url}/article/1"], zero_data_retention=True)
    assert "zeroDataRetention" in str(batch.value) and "/v2/scrape" in str(batch.value)
    with pytest.raises(BadRequestError) as crawl:
        firecrawl.start_crawl(f"{site.url}/article/1", zero_data_retention=True)
    assert "zeroDataRetention" in str(crawl.value)
