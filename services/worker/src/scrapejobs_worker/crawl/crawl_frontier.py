"""Which links of a crawled page become new crawl tasks.

A page at depth ``d`` (the start URL is depth 0) contributes children at depth ``d + 1``
only while ``d < max_depth``. Each link is normalised again with the extraction package's
normaliser (:func:`~scrapejobs_shared.extraction.urls.normalize_http_url`, which also
drops the fragment); :func:`crawl_key` is that normalised form and is the identity of the
page, so two workers discovering the same page create one task.

A link is admitted (:class:`CrawlFilter`) when:

* it is a valid task URL: http or https, no credentials, at most 2,048 characters
  (:func:`scrapejobs_shared.extraction.field_types.check_url`); ``mailto:``, ``javascript:``,
  ``ftp:``... are dropped;
* its host is the start URL's host, compared after normalisation (lower case, IDNA, a
  trailing dot ignored), or, with ``allow_subdomains``, a subdomain of it: a host ending in
  ``"." + start_host`` (``evil-example.com`` and ``example.com.evil.net`` are not
  subdomains of ``example.com``; the parent of the start host is not admitted; an IP
  address has no subdomains);
* both schemes are allowed for that host: an ``http`` start URL may lead to ``https``
  pages and back, since sites commonly mix the two. The scheme stays part of
  :func:`crawl_key`, so the two variants of one page are two tasks;
* its port is the start URL's: a link with a non-default port is admitted only when the
  start URL has that same port, and a link on its scheme's default port only when the start
  URL is on its own scheme's default port (``http://h/`` and ``https://h/`` are one site,
  ``https://h:8443/`` is another);
* its path, at most 2,000 characters long (longer paths are dropped unexamined, which also
  bounds the regex cost), matches (a search, on RE2: see
  :mod:`scrapejobs_shared.extraction.user_regex`) at least one ``include`` pattern when there
  are any, and no ``exclude`` pattern. Patterns see the normalised, percent-encoded path
  (``/caf%C3%A9``) without the query;
* with ``under_start_path``, its path starts with the start URL's path (``/docs`` admits
  ``/docs/intro`` and ``/docs``, not ``/blog``).

With ``ignore_query``, a link is followed without its query (URLs that differ only in it are
one page).

:func:`next_candidates` returns the admitted links de-duplicated in first-seen order,
without the page itself, at most ``max_pages`` of them: a per-page bound only; the store
enforces the job-wide page budget.
"""

from __future__ import annotations

import ipaddress
from collections.abc import Iterable
from dataclasses import dataclass
from urllib.parse import urlsplit, urlunsplit

from scrapejobs_shared.domain.crawl_identity import crawl_key
from scrapejobs_shared.domain.crawl_spec import CrawlSpec
from scrapejobs_shared.extraction.field_types import is_task_url
from scrapejobs_shared.extraction.urls import normalize_http_url
from scrapejobs_shared.extraction.user_regex import UserRegex, user_regex

MAX_FILTERED_PATH_LENGTH = 2000

_DEFAULT_PORTS = {"http": 80, "https": 443}


@dataclass(frozen=True)
class CrawlCandidate:
    """A page to enqueue: its normalised URL (:func:`crawl_key`) and its link depth."""

    url: str
    depth: int


@dataclass(frozen=True)
class CrawlFilter:
    """The scope of a crawl, with its include/exclude patterns compiled once."""

    host: str
    port: int | None
    allow_subdomains: bool
    include: tuple[UserRegex, ...] = ()
    exclude: tuple[UserRegex, ...] = ()
    path_prefix: str = ""  # under_start_path: the start URL's path

    @classmethod
    def from_spec(cls, crawl: CrawlSpec) -> CrawlFilter:
        start = urlsplit(crawl_key(crawl.start_url))
        return cls(
            host=_comparable_host(start.hostname or ""),
            port=start.port,
            allow_subdomains=crawl.allow_subdomains and not _is_ip_address(start.hostname),
            include=tuple(user_regex(pattern) for pattern in crawl.include),
            exclude=tuple(user_regex(pattern) for pattern in crawl.exclude),
            path_prefix=start.path if crawl.under_start_path else "",
        )

    def admits(self, url: str) -> bool:
        """Whether ``url`` (any string) is a page of this crawl."""
        key = normalize_http_url(url)
        return key is not None and self.admits_key(key)

    def admits_key(self, key: str) -> bool:
        """Whether an already normalised URL (:func:`crawl_key`) is a page of this crawl."""
        if not is_task_url(key):
            return False
        parts = urlsplit(key)
        return (
            self._admits_origin(parts.hostname or "", parts.port)
            and len(parts.path) <= MAX_FILTERED_PATH_LENGTH
            and self._admits_path(parts.path)
        )

    def _admits_origin(self, host: str, port: int | None) -> bool:
        if port != self.port:  # normalised URLs carry only non-default ports
            return False
        host = _comparable_host(host)
        if host == self.host:
            return True
        return self.allow_subdomains and host.endswith("." + self.host)

    def _admits_path(self, path: str) -> bool:
        if not path.startswith(self.path_prefix):
            return False
        if self.include and not any(pattern.search(path) for pattern in self.include):
            return False
        return not any(pattern.search(path) for pattern in self.exclude)


def _key(url: str, ignore_query: bool) -> str | None:
    key = normalize_http_url(url)
    if key is None or not ignore_query:
        return key
    return urlunsplit(urlsplit(key)._replace(query=""))


def next_candidates(
    links: Iterable[str], *, page_url: str, page_depth: int, crawl: CrawlSpec
) -> list[CrawlCandidate]:
    """The links of a page at ``page_depth`` to enqueue, in first-seen order."""
    if page_depth >= crawl.max_depth:
        return []
    crawl_filter = CrawlFilter.from_spec(crawl)
    seen = {_key(page_url, crawl.ignore_query)}
    candidates: list[CrawlCandidate] = []
    for link in links:
        key = _key(link, crawl.ignore_query)
        if key in seen:
            continue
        seen.add(key)
        if key is not None and crawl_filter.admits_key(key):
            candidates.append(CrawlCandidate(url=key, depth=page_depth + 1))
            if len(candidates) >= crawl.max_pages:
                break
    return candidates


def _comparable_host(host: str) -> str:
    return host.rstrip(".")


def _is_ip_address(host: str | None) -> bool:
    try:
        ipaddress.ip_address(host or "")
    except ValueError:
        return False
    return True
