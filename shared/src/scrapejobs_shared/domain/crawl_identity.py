"""When two URLs are the same page for a crawl: the task identity of a discovered URL."""

from __future__ import annotations

from scrapejobs_shared.domain.records import task_id_for
from scrapejobs_shared.extraction.urls import normalize_http_url


def crawl_key(url: str) -> str:
    """The identity of a page: its normalised URL without fragment (the worker and the
    dispatcher must agree). ``ValueError`` if it is not an absolute http(s) URL."""
    key = normalize_http_url(url)
    if key is None:
        raise ValueError(f"not an absolute http(s) URL: {url[:200]!r}")
    return key


def crawl_task_id(job_id: str, url: str) -> str:
    return task_id_for(job_id, "crawl:" + crawl_key(url))
