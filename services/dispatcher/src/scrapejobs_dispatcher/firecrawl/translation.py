"""A Firecrawl request as a native job: its scrape options become ``options``, its formats the
native formats and stages (format_translation.py), its webhook the native one
(webhook_option.py); the job is labelled with the endpoint it came from.

| Firecrawl | native |
|---|---|
| ``headers`` | ``options.headers`` |
| ``timeout`` (ms) | ``options.timeout_s`` (at most 50 s a fetch); a scrape's wait |
| crawl: ``limit``, ``maxDiscoveryDepth``, ``includePaths``, ``excludePaths``, ``allowSubdomains`` | ``crawl``'s ``max_pages`` (10,000 unset), ``max_depth`` (20 unset), ``include``, ``exclude``, ``allow_subdomains`` |
| crawl: ``crawlEntireDomain`` false (its default), ``ignoreQueryParameters``, ``sitemap`` | ``crawl.under_start_path``, ``crawl.ignore_query``, ``crawl.sitemap`` |
| crawl: ``scrapeOptions`` | as a scrape's options |
| an option family's fields (content scope, documents, the page cache, TLS, location...) | as its module says (scrapejobs_shared/options) |

A ``ValidationError`` of the native request is raised as ``InvalidOption`` naming the
Firecrawl field it came from.
"""  # noqa: E501

from __future__ import annotations

import hashlib
import json
import re
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any, TypeVar

from pydantic import BaseModel, ValidationError

from scrapejobs_dispatcher.firecrawl.format_translation import native_formats, pipeline
from scrapejobs_dispatcher.firecrawl.request_models import (
    MAX_CRAWL_DEPTH,
    BatchScrapeBody,
    CrawlBody,
    ScrapeBody,
    ScrapeOptions,
)
from scrapejobs_dispatcher.firecrawl.webhook_option import webhook
from scrapejobs_shared.domain.jobspec import JobRequest, ScrapeRequest
from scrapejobs_shared.errors import InvalidInput, describe
from scrapejobs_shared.extraction.field_types import MAX_URLS, is_task_url
from scrapejobs_shared.options import OPTIONS, InvalidOption, ServedHere
from scrapejobs_shared.options.page_cache import DEFAULT_MAX_AGE_MS

Valid = TypeVar("Valid", bound=BaseModel)
# a validator's or a union member's part of an error's location (function-after[...], str)
_TAG = re.compile(r"^[a-z-]+\[.*\]$")
LABEL = "firecrawl"  # the label naming the /v2 endpoint a job came from
MAX_FETCH_TIMEOUT_S = 50.0
ATTACH_WINDOW_S = 600.0  # how long a scrape's retry finds the job the first one started
DEFAULT_JSON_PROMPT = "Extract the data the schema describes from the page."
TRACKED_JSON_FIELD = "change_tracking_json"  # the changeTracking json mode's ai answer
OPEN_SCHEMA: dict[str, Any] = {"type": "object"}
# native field paths -> the Firecrawl field they came from
FIELD_NAMES = {
    "url": "url",
    "urls": "urls",
    "options.formats": "formats",
    "options.headers": "headers",
    "options.timeout_s": "timeout",
    "pipeline": "formats",
    "crawl.start_url": "url",
    "crawl.include": "includePaths",
    "crawl.exclude": "excludePaths",
    "webhook": "webhook",
    **OPTIONS.firecrawl_names(),
}


def job_options(options: ScrapeOptions, here: ServedHere = ServedHere()) -> dict[str, Any]:
    """The native ``options`` of a Firecrawl request, as this deployment serves them (``here``
    decides where the request does not say)."""
    native: dict[str, Any] = {"formats": native_formats(options), "headers": options.headers or {}}
    if options.timeout is not None:
        native["timeout_s"] = min(options.timeout / 1000, MAX_FETCH_TIMEOUT_S)
    OPTIONS.options_to_native(options, native, here)
    return native


def scrape_request(body: ScrapeBody, here: ServedHere = ServedHere()) -> ScrapeRequest:
    """``POST /v2/scrape`` as a one-URL scrape."""
    native: dict[str, Any] = {
        "url": body.url,
        "options": job_options(body, here),
        "pipeline": pipeline(body),
        "labels": {LABEL: "scrape"},
    }
    if body.timeout is not None:
        native["timeout_s"] = body.timeout / 1000
    OPTIONS.body_to_native("scrape", body, native)
    return validated(ScrapeRequest, native)


def batch_request(
    body: BatchScrapeBody, urls: list[str], here: ServedHere = ServedHere()
) -> JobRequest:
    """``POST /v2/batch/scrape`` as one job of ``urls``."""
    options = job_options(body, here)
    native = {
        "urls": urls,
        "options": options,
        "pipeline": pipeline(body),
        "labels": {LABEL: "batch"},
        "webhook": webhook(body.webhook),
    }
    OPTIONS.body_to_native("batch", body, native)
    return validated(JobRequest, native)


def crawl_request(body: CrawlBody, here: ServedHere = ServedHere()) -> JobRequest:
    """``POST /v2/crawl`` as one crawl job."""
    options = job_options(body.scrape_options or ScrapeOptions(), here)
    crawl = {
        "start_url": body.url,
        "max_depth": MAX_CRAWL_DEPTH
        if body.max_discovery_depth is None
        else body.max_discovery_depth,
        "max_pages": MAX_URLS if body.limit is None else body.limit,
        "include": body.include_paths or [],
        "exclude": body.exclude_paths or [],
        "allow_subdomains": body.allow_subdomains,
        "under_start_path": not body.crawl_entire_domain,
        "ignore_query": body.ignore_query_parameters,
        "sitemap": body.sitemap,
    }
    native = {
        "crawl": crawl,
        "options": options,
        "pipeline": pipeline(body.scrape_options or ScrapeOptions()),
        "labels": {LABEL: "crawl"},
        "webhook": webhook(body.webhook),
    }
    OPTIONS.body_to_native("crawl", body, native)
    return validated(JobRequest, native)


def valid_urls(urls: list[str]) -> tuple[list[str], list[str]]:
    """``urls`` split into those a job accepts and the others (``ignoreInvalidURLs``)."""
    good = [url for url in urls if is_task_url(url)]
    return good, [url for url in urls if not is_task_url(url)]


def validated(model: type[Valid], native: dict[str, Any], target: str = "") -> Valid:
    """``model`` of ``native``; ``InvalidOption`` naming the Firecrawl field at fault (a
    target's, under ``target``: a monitor's ``targets[0]``)."""
    try:
        return model.model_validate(native, strict=False)
    except ValidationError as exc:
        first = exc.errors()[0]
        loc = [str(part) for part in first.get("loc", ()) if not _TAG.match(str(part))]
        raise InvalidOption(_firecrawl_field(loc, target), describe(first)) from None


@contextmanager
def named_as_firecrawl(options_under: str = "") -> Iterator[None]:
    """Errors of a submission's rules (a format this deployment does not serve, an action past
    its limits), which name native fields, naming Firecrawl's instead; a request's options
    under ``options_under`` (a crawl's ``scrapeOptions``)."""
    try:
        yield
    except InvalidInput as exc:
        field = getattr(exc, "field", None)
        if isinstance(field, str) and (
            field.startswith(("options.", "pipeline", "crawl.")) or field in FIELD_NAMES
        ):
            loc = [part for part in re.split(r"\.|\[(\d+)\]", field) if part]
            target = "" if field.startswith("crawl.") else options_under
            named = _firecrawl_field(loc, target)
            exc.field = named
            exc.args = (str(exc).replace(field, named, 1),)
        raise


def _firecrawl_field(loc: list[str], target: str = "") -> str:
    """The Firecrawl name of a native field path (``urls.3`` -> ``urls[3]``), under
    ``target`` when it is a target's."""
    for length in range(len(loc), 0, -1):
        native = ".".join(loc[:length])
        if native in FIELD_NAMES:
            rest = "".join(f"[{part}]" if part.isdigit() else f".{part}" for part in loc[length:])
            return ".".join(filter(None, (target, FIELD_NAMES[native] + rest)))
    return ".".join(loc) or "body"


def attach_key(request: ScrapeRequest, max_age_ms: int | None, now_s: float) -> str | None:
    """The key under which identical scrapes share one job: those in the same window of
    ``min(maxAge, ATTACH_WINDOW_S)`` (so a result is never older than ``maxAge``). Firecrawl's
    SDK retries a scrape that answered 408 ("processing continues") with the same body: it
    finds the job under way instead of starting another. None with ``maxAge`` 0: always fresh."""
    age_ms = DEFAULT_MAX_AGE_MS if max_age_ms is None else max_age_ms
    if age_ms <= 0:
        return None
    window_s = min(age_ms / 1000, ATTACH_WINDOW_S)
    body = json.dumps(request.job_request().model_dump(mode="json"), sort_keys=True)
    digest = hashlib.sha256(body.encode()).hexdigest()
    return f"v2-scrape:{window_s:g}:{int(now_s // window_s)}:{digest}"
