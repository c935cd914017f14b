"""The pages a crawl's sitemaps list (``crawl.sitemap`` include or only): read by the start
task after its page, like Firecrawl's crawl does by default.

The sitemaps read are ``/sitemap.xml`` of the start URL's site, those its robots.txt names on
that site, and those a sitemap index among them lists, :data:`MAX_SITEMAPS` at most. Each is
fetched like a page: robots.txt asked first (when the job respects it), through the host's gate
(its pace and concurrency), by the SSRF-safe fetcher. A sitemap that cannot be read (refused,
throttled, an error, not XML) is left out: the crawl still follows links.
"""

from __future__ import annotations

import logging
import time
from datetime import timedelta
from urllib.parse import urljoin, urlsplit, urlunsplit

from scrapejobs_shared.domain.jobspec import JobSpec
from scrapejobs_shared.extraction import UnsupportedContent, extract_page
from scrapejobs_shared.extraction.content_kind import ContentKind
from scrapejobs_shared.extraction.links import is_sitemap
from scrapejobs_shared.options import OPTIONS
from scrapejobs_shared.politeness.admission import Politeness
from scrapejobs_shared.politeness.host_gate import Throttle
from scrapejobs_shared.politeness.host_key import host_key
from scrapejobs_shared.ports.fetcher import Fetcher, FetchError, FetchRequest

log = logging.getLogger(__name__)

MAX_SITEMAPS = 20
MARGIN_S = 2.0  # left to the start task's own recording
MIN_FETCH_S = 1.0


class CrawlSitemaps:
    def __init__(self, fetcher: Fetcher, politeness: Politeness, lease: timedelta) -> None:
        self._fetcher = fetcher
        self._politeness = politeness
        self._lease = lease

    async def pages(self, start_url: str, spec: JobSpec, tenant: str, deadline: float) -> list[str]:
        """The page URLs the site's sitemaps list, in the order found (sitemaps left out),
        read as ``tenant``'s job reads the site until ``deadline`` (``time.monotonic``) is
        near."""
        origin = _origin(start_url)
        listed = await self._politeness.sitemaps(start_url, spec.options, tenant)
        named = [urljoin(origin + "/", url) for url in listed]
        queue = [origin + "/sitemap.xml", *(url for url in named if _origin(url) == origin)]
        read: set[str] = set()
        pages: dict[str, None] = {}
        while queue and len(read) < MAX_SITEMAPS:
            timeout_s = min(spec.options.timeout_s, deadline - time.monotonic() - MARGIN_S)
            if timeout_s < MIN_FETCH_S:
                log.info("sitemaps left unread: out of time", extra={"left": len(queue)})
                break
            url = queue.pop(0)
            if url in read:
                continue
            read.add(url)
            for location in await self._locations(url, spec, tenant, timeout_s):
                if not is_sitemap(location):
                    pages[location] = None
                elif _origin(location) == origin:
                    queue.append(location)
        return list(pages)

    async def _locations(self, url: str, spec: JobSpec, tenant: str, timeout_s: float) -> list[str]:
        options = spec.options
        robots = await self._politeness.robots(url, options, tenant)
        if not robots.allowed:
            return []
        limits = self._politeness.limits(options, robots.crawl_delay_s)
        admission = await self._politeness.admit(
            host_key(url), limits, self._lease, max_wait_s=timeout_s
        )
        if isinstance(admission, Throttle):
            log.info("sitemap left out: host busy", extra={"url": url})
            return []
        try:
            request = FetchRequest(
                url,
                OPTIONS.fetch_headers(options),
                timeout_s,
                route=self._politeness.route(options, tenant),
            )
            response = await self._fetcher.fetch(request)
        except FetchError as exc:
            log.info("sitemap left out", extra={"url": url, "why": f"{exc.reason}: {exc}"})
            return []
        finally:
            await admission.release()
        if response.status != 200:
            return []
        try:
            page = extract_page(
                response.body,
                content_type=response.content_type,
                url=response.url,
                formats=["links"],
            )
        except UnsupportedContent:
            return []
        links = page.data.get("links")
        if page.content_kind is not ContentKind.XML or not isinstance(links, list):
            return []
        return [link for link in links if isinstance(link, str)]


def _origin(url: str) -> str:
    parts = urlsplit(url)
    return urlunsplit((parts.scheme, parts.netloc.lower(), "", "", ""))
