"""The bodies of Firecrawl's v2 requests, as its SDKs send them (camelCase, scrape options
flattened into the top level of a batch).

An option this service honours is typed; an option it cannot honour is accepted only at the
value that asks for nothing (the SDKs send some of them on every request) and is otherwise a
``400`` naming it. An option it does not know is a ``400`` too ("unknown field").
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Annotated, Literal, cast

from pydantic import (
    Field,
    model_validator,
)
from pydantic.config import JsonDict

from scrapejobs_dispatcher.firecrawl.format_models import (
    ALIASES,
    FULL_PAGE_SCREENSHOT,
    ChangeTrackingFormat,
    FormatOption,
    JsonFormat,
    ScreenshotFormat,
    markdown_only,
)
from scrapejobs_dispatcher.firecrawl.webhook_option import WebhookOption
from scrapejobs_shared.extraction.field_types import (
    FORBIDDEN_HEADERS,
    JSON_INT,
    MAX_URLS,
    URL_SCHEMA,
    HttpUrl,
    headers_schema,
)
from scrapejobs_shared.extraction.formats import items_any_of
from scrapejobs_shared.options import OPTIONS
from scrapejobs_shared.options.camel_model import CamelModel

MAX_TIMEOUT_MS = 300_000


class SdkRequest(CamelModel):
    """What Firecrawl's SDKs add to a request to say where it came from (kept for nothing)."""

    integration: str | None = Field(default=None, max_length=200)
    origin: str | None = Field(default=None, max_length=200)


class ScrapeOptionsBase(SdkRequest):
    """Firecrawl's scrape options (``POST /v2/scrape``, and flattened into a batch)."""

    formats: list[FormatOption] = Field(
        default_factory=markdown_only, max_length=10, json_schema_extra=items_any_of
    )
    headers: dict[str, str] | None = Field(
        default=None, max_length=50, json_schema_extra=headers_schema(FORBIDDEN_HEADERS)
    )
    timeout: Annotated[int, Field(gt=0, le=MAX_TIMEOUT_MS), JSON_INT] | None = Field(
        default=None, description="ms"
    )
    block_ads: bool = True

    def json_format(self) -> JsonFormat | None:
        return next((f for f in self.formats if isinstance(f, JsonFormat)), None)

    def change_tracking(self) -> ChangeTrackingFormat | None:
        """The changeTracking format asked for (its name alone: git-diff mode), if any."""
        for wanted in self.formats:
            if isinstance(wanted, ChangeTrackingFormat):
                return wanted if wanted.modes else wanted.model_copy(update={"modes": ["git-diff"]})
            if "changeTracking" in (wanted, getattr(wanted, "type", None)):
                return ChangeTrackingFormat(type="changeTracking", modes=["git-diff"])
        return None

    def screenshot(self) -> ScreenshotFormat | None:
        """The screenshot asked for (``"screenshot@fullPage"``: of the whole page), if any."""
        for wanted in self.formats:
            if isinstance(wanted, ScreenshotFormat):
                return wanted
            name = wanted if isinstance(wanted, str) else getattr(wanted, "type", None)
            if name in ("screenshot", FULL_PAGE_SCREENSHOT):
                full_page = name == FULL_PAGE_SCREENSHOT
                return ScreenshotFormat.model_validate(
                    {"type": "screenshot", "fullPage": full_page}
                )
        return None

    def format_names(self) -> list[str]:
        names = [f if isinstance(f, str) else f.type for f in self.formats]
        return [ALIASES.get(name, name) for name in names]

    @model_validator(mode="after")
    def _tracking_needs_markdown(self) -> ScrapeOptions:
        if self.change_tracking() is not None and "markdown" not in self.format_names():
            raise ValueError("the changeTracking format needs the markdown format too")
        return self


if TYPE_CHECKING:
    ScrapeOptions = ScrapeOptionsBase
else:  # with the option families' fields (scrapejobs_shared/options)
    ScrapeOptions = OPTIONS.firecrawl_model(ScrapeOptionsBase, "scrape_options", "ScrapeOptions")


class ScrapeBodyBase(ScrapeOptions):
    """``POST /v2/scrape``."""

    url: HttpUrl


if TYPE_CHECKING:
    ScrapeBody = ScrapeBodyBase
else:  # with the option families' fields (scrapejobs_shared/options)
    ScrapeBody = OPTIONS.firecrawl_model(ScrapeBodyBase, "scrape", "ScrapeBody")


class BatchScrapeBodyBase(ScrapeOptions):
    """``POST /v2/batch/scrape``: the URLs, the scrape options flattened beside them."""

    urls: list[str] = Field(
        min_length=1,
        max_length=MAX_URLS,
        description="http(s) URLs (with ignoreInvalidURLs, others are left out and listed)",
        json_schema_extra={"items": cast(JsonDict, URL_SCHEMA)},
    )
    ignore_invalid_urls: bool = Field(default=False, alias="ignoreInvalidURLs")
    webhook: WebhookOption | None = Field(
        default=None, description="A URL, or where and which events to POST"
    )


if TYPE_CHECKING:
    BatchScrapeBody = BatchScrapeBodyBase
else:  # with the option families' fields (scrapejobs_shared/options)
    BatchScrapeBody = OPTIONS.firecrawl_model(BatchScrapeBodyBase, "batch", "BatchScrapeBody")


MAX_CRAWL_DEPTH = 20


class CrawlBodyBase(SdkRequest):
    """``POST /v2/crawl``: follow links from ``url``; every page found is scraped."""

    url: HttpUrl
    include_paths: list[str] | None = Field(
        default=None, max_length=50, description="Regexes; a page's path must match one"
    )
    exclude_paths: list[str] | None = Field(
        default=None, max_length=50, description="Regexes; a page's path must match none"
    )
    max_discovery_depth: Annotated[int, Field(ge=0, le=MAX_CRAWL_DEPTH), JSON_INT] | None = Field(
        default=None, description="Link hops from url (default and most: 20)"
    )
    limit: Annotated[int, Field(ge=1, le=MAX_URLS), JSON_INT] | None = Field(
        default=None, description="Pages at most (default and most: 10,000)"
    )
    crawl_entire_domain: bool = Field(
        default=False, description="false: only pages under url's path; true: the whole site"
    )
    allow_subdomains: bool = False
    ignore_query_parameters: bool = False
    deduplicate_similar_urls: bool = Field(
        default=True,
        alias="deduplicateSimilarURLs",
        description="URLs are always normalised (case, default ports, fragments) into one page",
    )
    scrape_options: ScrapeOptions | None = None
    sitemap: Literal["skip", "include", "only"] = Field(
        default="include",
        description="include: the site's sitemaps add their pages to the links followed; "
        "only: the sitemaps' pages (and url) alone; skip: links only",
    )
    webhook: WebhookOption | None = Field(
        default=None, description="A URL, or where and which events to POST"
    )


if TYPE_CHECKING:
    CrawlBody = CrawlBodyBase
else:  # with the option families' fields (scrapejobs_shared/options)
    CrawlBody = OPTIONS.firecrawl_model(CrawlBodyBase, "crawl", "CrawlBody")


MAX_MAP_LINKS = 100_000


class MapBodyBase(SdkRequest):
    """``POST /v2/map``: the URLs of the site at ``url``, from its sitemaps and its page."""

    url: HttpUrl
    search: str | None = Field(
        default=None, max_length=500, description="Only links containing this (any case)"
    )
    sitemap: Literal["only", "include", "skip"] = Field(
        default="include",
        description="include: the site's sitemaps and the page's links; only: the sitemaps; "
        "skip: the page's links",
    )
    include_subdomains: bool = Field(default=True, description="Links of subdomains too")
    ignore_query_parameters: bool = Field(
        default=True, description="A link's query left out (one link a path)"
    )
    limit: Annotated[int, Field(ge=1, le=MAX_MAP_LINKS), JSON_INT] = Field(
        default=5000, description="Links at most"
    )
    timeout: Annotated[int, Field(ge=1, le=MAX_TIMEOUT_MS), JSON_INT] | None = Field(
        default=None, description="Milliseconds to wait for the fetches (default: the most)"
    )


if TYPE_CHECKING:
    MapBody = MapBodyBase
else:  # with the option families' fields (scrapejobs_shared/options)
    MapBody = OPTIONS.firecrawl_model(MapBodyBase, "map", "MapBody")
