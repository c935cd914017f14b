"""Pages that are not what was asked for, on the real stack: a 403 with ``cf-mitigated:
challenge``, a 200 "Just a moment..." interstitial, a redirect to a sign-in page and an app
shell end ``failed`` with their typed outcomes, are not kept in the page cache (a later job
asking for them fetches them again), are counted apart in the stats and not as credits, and
say so in a Firecrawl Document; the catalog's ordinary pages beside them succeed. They are
served by a site of their own (its own host): a challenge holds its host as a 429 does."""

from __future__ import annotations

import uuid
from collections.abc import Iterator
from typing import Any

import pytest
from firecrawl import Firecrawl

from scrapejobs_devstack.stack import Stack
from support.jobs import all_results, stats_when, steady_async, submit, wait_finished
from support.site import Site

pytestmark = [pytest.mark.emulators, pytest.mark.stack]

KINDS = {
    "cf-challenge": "challenge: Cloudflare (cf-mitigated: challenge, HTTP 403)",
    "moment": "challenge: Cloudflare ('/cdn-cgi/challenge-platform/' in the page)",
    "members": "login_wall: redirected to a sign-in page",
    "shell": "empty_content: the page shows nothing",
}


@pytest.fixture(scope="module")
def walled_site() -> Iterator[Site]:
    site = Site().start()
    yield site
    site.stop()


def body(walled: Site, site: Site, tag: str) -> dict[str, Any]:
    urls = [f"{walled.url}/{kind}/{tag}" for kind in KINDS]
    urls += [f"{site.url}/product/{n}?t={tag}" for n in (11, 12)]
    return {
        "urls": urls,
        "options": {"formats": ["markdown"], "cache_store": True, "cache_max_age_s": 600},
    }


async def test_challenges_login_walls_and_shells_are_no_success(
    api, site: Site, walled_site: Site
) -> None:
    tag = uuid.uuid4().hex[:6]

    async def tasks() -> dict[str, Any]:
        answer: dict[str, Any] = (await api.get("/v1/stats", params={"window": "1h"})).json()
        return answer["tasks"]

    before = await steady_async(tasks)  # earlier jobs' statistics are in
    job = await submit(api, body(walled_site, site, tag))
    final = await wait_finished(api, job["id"])
    assert final["counts"]["succeeded"] == 2 and final["counts"]["failed"] == 4, final

    results = {r["url"]: r for r in await all_results(api, job["id"])}
    for kind, error in KINDS.items():
        result = results[f"{walled_site.url}/{kind}/{tag}"]
        assert result["status"] == "failed" and result["error"].startswith(error), result
    assert results[f"{walled_site.url}/cf-challenge/{tag}"]["http_status"] == 403
    for n in (11, 12):
        assert results[f"{site.url}/product/{n}?t={tag}"]["status"] == "succeeded"

    def unusable(after: dict[str, Any]) -> dict[str, int]:
        return {k: n - before["unusable"].get(k, 0) for k, n in after["unusable"].items()}

    expected = {"challenge": 2, "login_wall": 1, "empty_content": 1}
    after = await stats_when(tasks, lambda now: unusable(now) == expected)
    assert unusable(after) == expected
    home = await api.get("/ui/fragments/overview")
    assert "Not the page" in home.text

    # never kept: the same request again fetches them again (and reuses the catalog's pages)
    fetched = {kind: walled_site.count(f"/{kind}/{tag}") for kind in KINDS}
    products = [site.count(f"/product/{n}") for n in (11, 12)]
    again = await submit(api, body(walled_site, site, tag))
    await wait_finished(api, again["id"])
    for kind in KINDS:
        assert walled_site.count(f"/{kind}/{tag}") == fetched[kind] + 1, kind
    assert [site.count(f"/product/{n}") for n in (11, 12)] == products  # reused


def test_a_firecrawl_document_says_what_the_page_was(stack: Stack, walled_site: Site) -> None:
    firecrawl = Firecrawl(api_key="fc-local", api_url=stack.config.dispatcher_url)
    doc = firecrawl.scrape(f"{walled_site.url}/members/{uuid.uuid4().hex[:6]}", max_age=0)
    meta = doc.metadata_typed
    assert meta.status_code == 200 and meta.error is not None
    assert meta.error.startswith("login_wall: redirected to a sign-in page")
