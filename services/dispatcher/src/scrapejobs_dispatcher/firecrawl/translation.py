"""A Firecrawl request as a native job: its scrape options become ``options`` (formats,
content scope, headers, timeout, rendering) and its ``json`` format an ``ai`` stage; the job is
labelled with the endpoint it came from.

| Firecrawl | native |
|---|---|
| ``markdown`` / ``html`` / ``rawHtml`` / ``links`` / ``images`` / ``attributes`` / ``summary`` | the format of that Firecrawl name in the registry (extraction/formats): ``markdown`` / ``clean_html`` / ``html`` / ``links`` / ``images`` / ``attributes`` / ``summary`` (an ``ai`` stage) (``metadata`` always) |
| ``{"type": "json", "schema", "prompt"}`` | an ``ai`` stage answering into ``json`` |
| ``changeTracking`` (``/v2/scrape``, monitors) | the page compared with the previous scrape of its URL (change_tracking.py); its ``json`` mode an ``ai`` stage (the ``json`` format's, if asked for too) |
| ``headers`` | ``options.headers`` |
| ``timeout`` (ms) | ``options.timeout_s`` (at most 50 s a fetch); a scrape's wait |
| ``maxConcurrency`` | ``options.per_host_concurrency`` |
| crawl: ``limit``, ``maxDiscoveryDepth``, ``includePaths``, ``excludePaths``, ``allowSubdomains`` | ``crawl``'s ``max_pages`` (10,000 unset), ``max_depth`` (20 unset), ``include``, ``exclude``, ``allow_subdomains`` |
| crawl: ``crawlEntireDomain`` false (its default), ``ignoreQueryParameters``, ``sitemap`` | ``crawl.under_start_path``, ``crawl.ignore_query``, ``crawl.sitemap`` |
| crawl: ``delay`` (s), ``ignoreRobotsTxt``, ``scrapeOptions`` | ``options.per_host_rps`` (1 / delay), ``options.respect_robots``, as a scrape's options |
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

from scrapejobs_dispatcher.firecrawl.request_models import (
    ALIASES,
    MAX_CRAWL_DEPTH,
    BatchScrapeBody,
    ChangeTrackingFormat,
    CrawlBody,
    JsonFormat,
    ScrapeBody,
    ScrapeOptions,
    Webhook,
)
from scrapejobs_shared.domain.jobspec import JobRequest, ScrapeRequest
from scrapejobs_shared.errors import InvalidInput, describe
from scrapejobs_shared.extraction.field_types import MAX_URLS, check_url
from scrapejobs_shared.extraction.formats import (
    FORMATS,
    FormatChoice,
    FormatOptions,
    ScreenshotOptions,
)
from scrapejobs_shared.firecrawl.documents import JSON_FIELD
from scrapejobs_shared.firecrawl.webhook_bodies import EVENTS as WEBHOOK_EVENTS
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
    "options.per_host_concurrency": "maxConcurrency",
    "pipeline": "formats",
    "crawl.start_url": "url",
    "crawl.include": "includePaths",
    "crawl.exclude": "excludePaths",
    "options.per_host_rps": "delay",
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


def native_formats(options: ScrapeOptions) -> list[FormatChoice]:
    """The native formats of Firecrawl's (``metadata`` always; ``json`` and ``changeTracking``
    are stages and comparisons, not formats): each by its native name, or as the object it
    was asked with when it takes options."""
    found: dict[str, FormatChoice] = {"metadata": "metadata"}
    if (shot := options.screenshot()) is not None:
        found["screenshot"] = ScreenshotOptions(
            type="screenshot", full_page=bool(shot.full_page), quality=shot.quality
        )
    for wanted in options.formats:
        name = wanted if isinstance(wanted, str) else wanted.type
        page_format = FORMATS.firecrawl(ALIASES.get(name, name))
        if page_format is not None:
            choice = wanted if isinstance(wanted, FormatOptions) else page_format.name
            found.setdefault(page_format.name, choice)
    return list(found.values())


def webhook(option: str | Webhook | None) -> dict[str, Any] | None:
    """The native webhook of a Firecrawl one: Firecrawl's bodies and signature, its events."""
    if option is None:
        return None
    hook = Webhook(url=option) if isinstance(option, str) else option
    names: list[str] = list(hook.events or WEBHOOK_EVENTS)
    return {
        "url": hook.url,
        "headers": hook.headers or {},
        "metadata": hook.metadata or {},
        "events": [native for name in dict.fromkeys(names) for native in WEBHOOK_EVENTS[name]],
        "shape": "firecrawl",
    }


def pipeline(options: ScrapeOptions) -> list[dict[str, Any]]:
    """An ``ai`` stage for the ``json`` format, else for the changeTracking format's ``json``
    mode (none without either: one stage answers both)."""
    wanted: JsonFormat | ChangeTrackingFormat | None = options.json_format()
    into = JSON_FIELD
    if wanted is None:
        wanted = options.change_tracking()
        into = TRACKED_JSON_FIELD
        if wanted is None or "json" not in wanted.modes:
            return []
    staged = [f.firecrawl for f in FORMATS.stages(native_formats(options))]
    if staged:
        raise InvalidOption(
            "formats",
            f"{', '.join(map(str, staged))} and json (or changeTracking's json mode) each ask the "
            "language model, and a request asks it once: ask for them in two requests",
        )
    stage = {
        "prompt": wanted.prompt or DEFAULT_JSON_PROMPT,
        "schema": wanted.schema_ or OPEN_SCHEMA,
        "into": into,
    }
    return [{"ai": stage}]


def tracked_field(options: ScrapeOptions) -> str | None:
    """Where the fields the changeTracking format's ``json`` mode compares are (None: no such
    mode)."""
    tracking = options.change_tracking()
    if tracking is None or "json" not in tracking.modes:
        return None
    return JSON_FIELD if options.json_format() is not None else TRACKED_JSON_FIELD


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
    if body.max_concurrency is not None:
        options["per_host_concurrency"] = body.max_concurrency
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
    if body.max_concurrency is not None:
        options["per_host_concurrency"] = body.max_concurrency
    if body.delay is not None:
        options["per_host_rps"] = 1 / body.delay
    options["respect_robots"] = not body.ignore_robots_txt
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


def _or(value: int | None, default: int) -> int:
    return default if value is None else value


def valid_urls(urls: list[str]) -> tuple[list[str], list[str]]:
    """``urls`` split into those a job accepts and the others (``ignoreInvalidURLs``)."""
    good: list[str] = []
    bad: list[str] = []
    for url in urls:
        try:
            check_url(url)
        except ValueError:
            bad.append(url)
        else:
            good.append(url)
    return good, bad


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
