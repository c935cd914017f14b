"""``POST /v2/map``: the URLs of a site, as Firecrawl's map answers them, found by native jobs.

Every fetch is the worker's, with the same safety, politeness and robots.txt as any job's:

1. One job of the start page (its links), the origin's ``/robots.txt`` (its rules and its
   ``Sitemap:`` lines) and ``/sitemap.xml`` (the links of a sitemap are its locations).
2. While there are more sitemaps to read (those robots.txt names, those a sitemap index
   lists; ``MAX_SITEMAPS`` in all), one more job of them, twice at most: robots.txt naming
   an index of sitemaps is read to the end; anything nested deeper is not.

The answer: the start URL, then the sitemaps' URLs, then the page's links, each once, kept
when they are of the site (its host, ``www.`` aside; its subdomains with
``includeSubdomains``), allowed by its robots.txt (a subdomain's own robots.txt is not read),
contain ``search`` (any case), without their query with ``ignoreQueryParameters``; at most
``limit``. Nothing is fetched beyond those pages: a link's title and description stay empty.
"""

from __future__ import annotations

import time
from dataclasses import dataclass
from typing import Literal
from urllib.parse import urljoin, urlsplit, urlunsplit

from scrapejobs_dispatcher.firecrawl.request_models import MapBody
from scrapejobs_dispatcher.firecrawl.translation import LABEL, valid_urls
from scrapejobs_dispatcher.submission.submission import Submission
from scrapejobs_dispatcher.submission.sync_scrape import SyncScrape
from scrapejobs_shared.domain.jobspec import JobRequest
from scrapejobs_shared.domain.records import TaskRecord
from scrapejobs_shared.domain.statuses import TaskStatus
from scrapejobs_shared.errors import WorkFailed
from scrapejobs_shared.extraction.links import is_sitemap
from scrapejobs_shared.extraction.urls import normalize_http_url
from scrapejobs_shared.politeness.robots_rules import ROBOTS_PATH, RobotsRules, rules_for_response
from scrapejobs_shared.ports.task_results import TaskResults

MAX_SITEMAPS = 20  # read at most, in all
SITEMAP_LEVELS = 2  # rounds after the first: a sitemap robots.txt names, an index's sitemaps
DEFAULT_WAIT_S = 60.0  # without a timeout (the service's longest wait, if shorter)
SITEMAP_PATH = "/sitemap.xml"
Role = Literal["page", "robots", "sitemap"]


class StartPageUnreachable(WorkFailed):
    """Neither the start page nor a sitemap could be read: ``reason`` says what happened."""

    def __init__(self, reason: str) -> None:
        super().__init__(reason)
        self.reason = reason


@dataclass
class Found:
    """What the rounds read."""

    page_links: list[str]
    sitemap_links: list[str]
    robots: RobotsRules
    start_failure: str | None = None  # the start page's task error, when it failed


class SiteMapper:
    def __init__(self, scraper: SyncScrape, store: TaskResults, user_agent: str) -> None:
        self._scraper = scraper
        self._store = store
        self._user_agent = user_agent

    async def links(self, body: MapBody, tenant: str) -> list[str]:
        """The site's URLs (``ScrapeTimedOut`` when a round outlives the wait;
        ``StartPageUnreachable`` when nothing could be read)."""
        wait_s = body.timeout / 1000 if body.timeout else DEFAULT_WAIT_S
        deadline = time.monotonic() + wait_s
        origin = _origin(body.url)
        first: list[tuple[str, Role]] = [(origin + ROBOTS_PATH, "robots")]
        if body.sitemap != "only":
            first.insert(0, (body.url, "page"))
        if body.sitemap != "skip":
            first.append((origin + SITEMAP_PATH, "sitemap"))
        found = Found([], [], RobotsRules.allow_all())
        read = {url for url, _ in first}
        more = await self._round(first, found, deadline, tenant)
        for _ in range(SITEMAP_LEVELS if body.sitemap != "skip" else 0):
            room = MAX_SITEMAPS - sum(1 for url in read if is_sitemap(url))
            unread = [url for url in dict.fromkeys(more) if url not in read][: max(0, room)]
            if not unread:  # sitemaps robots.txt names, those an index lists: none left
                break
            read.update(unread)
            more = await self._round([(url, "sitemap") for url in unread], found, deadline, tenant)
        if not found.page_links and not found.sitemap_links and found.start_failure:
            raise StartPageUnreachable(found.start_failure)
        return site_links(body, found, self._user_agent)

    async def _round(
        self, urls: list[tuple[str, Role]], found: Found, deadline: float, tenant: str
    ) -> list[str]:
        """Fetch ``urls`` as one job and add what they hold to ``found``; the sitemaps to read
        next (named by robots.txt, listed by a sitemap index). A URL no job takes (one
        over 2,048 characters, say: the start URL's robots.txt can be) is left out."""
        good = set(valid_urls([url for url, _ in urls])[0])
        roles: dict[str, Role] = {}
        for url, role in urls:  # each URL once, in its first role (a start URL may be one)
            if url in good:
                roles.setdefault(url, role)
        urls = list(roles.items())
        if not urls:
            return []
        job = JobRequest.model_validate(
            {
                "urls": [url for url, _ in urls],
                "options": {"formats": ["links", "text"]},
                "labels": {LABEL: "map"},
            }
        )
        wait_s = max(0.0, deadline - time.monotonic())
        record = await self._scraper.run(Submission(job, tenant), wait_s)
        page = await self._store.list_tasks(record.id, len(urls), None)
        more: list[str] = []
        for task in page.items:
            url, role = urls[task.index]
            if role == "robots":
                more += _robots_sitemaps(task, url, found)
                continue
            if task.status is not TaskStatus.SUCCEEDED:
                if role == "page":
                    found.start_failure = task.error or task.status.value
                continue
            links = _strings((task.data or {}).get("links"))
            if role == "page":
                found.page_links += links
            else:
                found.sitemap_links += [link for link in links if not is_sitemap(link)]
                more += [link for link in links if is_sitemap(link)]
        return more


def site_links(body: MapBody, found: Found, user_agent: str) -> list[str]:
    """The links of the answer, in order, filtered and cut as ``body`` asks."""
    start = urlsplit(body.url)
    site = _site_host(start.hostname or "")
    origin = _origin(body.url)
    needle = body.search.lower() if body.search else None
    kept: dict[str, None] = {}
    for raw in [body.url, *found.sitemap_links, *found.page_links]:
        url = normalize_http_url(raw)
        if url is None:
            continue
        parts = urlsplit(url)
        host = _site_host(parts.hostname or "")
        if host != site and not (body.include_subdomains and host.endswith("." + site)):
            continue
        if body.ignore_query_parameters:
            url = urlunsplit(parts._replace(query=""))
        if needle is not None and needle not in url.lower():
            continue
        if _origin(url) == origin and not found.robots.allows(url, user_agent):
            continue
        kept[url] = None
        if len(kept) == body.limit:
            break
    return list(kept)


def _robots_sitemaps(task: TaskRecord, url: str, found: Found) -> list[str]:
    """Read robots.txt's rules into ``found``; the sitemaps it names."""
    text = (task.data or {}).get("text") if task.status is TaskStatus.SUCCEEDED else None
    if isinstance(text, str):
        found.robots = RobotsRules.parse(text.encode())
    else:  # as the worker reads it: 4xx allows everything; 5xx, 429, no answer nothing
        found.robots = rules_for_response(task.http_status, b"")
    return [urljoin(url, named) for named in found.robots.sitemaps]


def _origin(url: str) -> str:
    parts = urlsplit(url)
    return urlunsplit((parts.scheme, parts.netloc, "", "", ""))


def _site_host(host: str) -> str:
    return host.removeprefix("www.")


def _strings(value: object) -> list[str]:
    return [v for v in value if isinstance(v, str)] if isinstance(value, list) else []
