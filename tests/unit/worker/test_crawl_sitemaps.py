"""A crawl with ``sitemap`` include reads the site's sitemaps from its start page's task:
/sitemap.xml, those robots.txt names on the site, one index below; their pages join the crawl
at depth 0 within its scope (robots.txt, the section, the page budget); ``only`` follows no
links; ``skip`` (the native default) reads none; a sitemap that fails is left out."""

from __future__ import annotations

from datetime import UTC, datetime

from scrapejobs_shared.adapters.memory.job_store import MemoryJobStore
from scrapejobs_shared.ports.fetcher import FetchRequest, FetchResponse, TransientFetchError
from support.worker_fakes import ScriptedFetcher, build_processor, push, setup_job

NOW = datetime(2026, 11, 26, 10, tzinfo=UTC)
SITE = "http://a.example"
NS = "http://www.sitemaps.org/schemas/sitemap/0.9"


def sitemap(kind: str, paths: list[str]) -> bytes:
    entry = "url" if kind == "urlset" else "sitemap"
    locs = "".join(f"<{entry}><loc>{SITE}{path}</loc></{entry}>" for path in paths)
    return f'<?xml version="1.0"?><{kind} xmlns="{NS}">{locs}</{kind}>'.encode()


class SiteFetcher(ScriptedFetcher):
    """The start page links to /docs/a; the sitemaps list more (and one fails)."""

    FILES = {
        "/sitemap.xml": sitemap("urlset", ["/docs/a", "/docs/b", "/blog/x", "/docs/private/p"]),
        "/index.xml": sitemap("sitemapindex", ["/more.xml", "/broken.xml"]),
        "/more.xml": sitemap("urlset", ["/docs/c"]),
    }

    def __init__(self) -> None:
        robots = b"User-agent: *\nDisallow: /docs/private/\nSitemap: /index.xml\n"
        super().__init__(200, robots=(200, robots))

    async def fetch(self, request: FetchRequest) -> FetchResponse:
        if request.url.endswith("/robots.txt"):
            return await super().fetch(request)
        self.calls.append(request)
        path = request.url.removeprefix(SITE)
        if path == "/broken.xml":
            raise TransientFetchError("connection reset")
        if path in self.FILES:
            headers = {"content-type": "application/xml"}
            return FetchResponse(request.url, 200, headers, self.FILES[path], elapsed_ms=1)
        body = b"<html><body><h1>Hi</h1><a href='/docs/a'>a</a></body></html>"
        return FetchResponse(request.url, 200, {"content-type": "text/html"}, body, elapsed_ms=1)


async def crawl(sitemap_option: str | None) -> tuple[dict[str, int], list[str]]:
    store = MemoryJobStore()
    spec: dict[str, object] = {"start_url": f"{SITE}/docs/", "under_start_path": True}
    if sitemap_option is not None:
        spec["sitemap"] = sitemap_option
    batch = await setup_job(store, {"crawl": spec})
    fetcher = SiteFetcher()
    processor = build_processor(store, fetcher, lambda: NOW)
    assert (await processor.handle_push(push(batch=batch))).ack
    tasks = {
        item.url: item.depth
        for record in store.batches["j"].values()
        for item in record.items
        if item.url != f"{SITE}/docs/"
    }
    return tasks, [call.url.removeprefix(SITE) for call in fetcher.calls]


async def test_include_adds_the_sitemaps_pages_in_scope_at_depth_zero() -> None:
    tasks, fetched = await crawl("include")
    listed = {f"{SITE}/docs/b": 0, f"{SITE}/docs/c": 0, f"{SITE}/docs/private/p": 0}
    assert tasks == {f"{SITE}/docs/a": 1} | listed  # /blog/x is outside the section
    # (/docs/private/p is refused by robots.txt when its task runs, as a link's would be)
    assert fetched == ["/docs/", "/sitemap.xml", "/index.xml", "/more.xml", "/broken.xml"]


async def test_only_follows_no_links_and_skip_reads_no_sitemap() -> None:
    tasks, _ = await crawl("only")
    assert tasks == {
        f"{SITE}/docs/a": 0,
        f"{SITE}/docs/b": 0,
        f"{SITE}/docs/c": 0,
        f"{SITE}/docs/private/p": 0,
    }
    tasks, fetched = await crawl(None)
    assert tasks == {f"{SITE}/docs/a": 1} and fetched == ["/docs/"]
