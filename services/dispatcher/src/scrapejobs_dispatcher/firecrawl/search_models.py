"""The bodies and answers of Firecrawl's search (``POST /v2/search``, v1's ``POST /v1/search``),
as firecrawl-py sends them: ``sources`` and ``categories`` as names or ``{"type": …}``,
``tbs`` Google's ``qdr:`` ranges, ``scrapeOptions`` to scrape the results through the queue.
What the search here cannot honour (a ``location`` or ``country`` to search from; Firecrawl's
enterprise options) is a ``400`` naming it."""

from __future__ import annotations

from typing import Annotated, Any, Literal

from pydantic import BaseModel, Field

from scrapejobs_dispatcher.firecrawl.answer_models import Answer
from scrapejobs_dispatcher.firecrawl.request_models import MAX_TIMEOUT_MS, ScrapeOptions, SdkRequest
from scrapejobs_shared.extraction.field_types import JSON_INT
from scrapejobs_shared.options.camel_model import CamelModel
from scrapejobs_shared.ports.search_engine import MAX_RESULTS, SearchSource

Category = Literal["github", "research", "pdf"]
DOMAIN = r"^[A-Za-z0-9.-]{1,253}$"
DEFAULT_TIMEOUT_MS = 60_000
MIN_TIMEOUT_MS = 1_000


class SourceOption(CamelModel):
    type: SearchSource


class CategoryOption(CamelModel):
    type: Category


def _web() -> list[SearchSource | SourceOption]:
    return ["web"]


class SearchBody(SdkRequest):
    query: str = Field(min_length=1, max_length=500, description="What to search for")
    limit: Annotated[int, Field(ge=1, le=MAX_RESULTS), JSON_INT] = Field(
        default=5, description="Results per source at most"
    )
    sources: list[SearchSource | SourceOption] = Field(
        default_factory=_web, min_length=1, max_length=3, description="web, news, images"
    )
    categories: list[Category | CategoryOption] = Field(
        default_factory=list,
        max_length=3,
        description="Web results of GitHub (github), academic sources (research) or PDFs (pdf)",
    )
    tbs: str | None = Field(
        default=None,
        pattern=r"^qdr:[hdwmy]$",
        description="Published within: qdr:h or qdr:d (a day), qdr:w, qdr:m, qdr:y",
    )
    timeout: Annotated[int, Field(ge=MIN_TIMEOUT_MS, le=MAX_TIMEOUT_MS), JSON_INT] = Field(
        default=DEFAULT_TIMEOUT_MS,
        description="ms for the search and any scraping together (at least 1000: the "
        "provider's answer alone takes a round trip)",
    )
    ignore_invalid_urls: bool = Field(
        default=False,
        alias="ignoreInvalidURLs",
        description="Results whose URL a job refuses are left out (else listed, not scraped)",
    )
    include_domains: list[Annotated[str, Field(pattern=DOMAIN)]] | None = Field(
        default=None, max_length=50, description="Only results of these domains (and subdomains)"
    )
    exclude_domains: list[Annotated[str, Field(pattern=DOMAIN)]] | None = Field(
        default=None, max_length=50, description="No results of these domains (or subdomains)"
    )
    scrape_options: ScrapeOptions | None = Field(
        default=None, description="Scrape the web and news results (one job, through the queue)"
    )
    location: None = Field(default=None, description="Not served: searching from a place")
    country: None = Field(default=None, description="Not served: searching from a country")

    def source_names(self) -> list[SearchSource]:
        named = [s if isinstance(s, str) else s.type for s in self.sources]
        return list(dict.fromkeys(named))

    def category_names(self) -> list[Category]:
        named = [c if isinstance(c, str) else c.type for c in self.categories]
        return list(dict.fromkeys(named))


class SearchBodyV1(SdkRequest):
    """v1's ``POST /v1/search`` (firecrawl-py's ``v1`` client sends ``lang`` and ``country``
    on every call: the language asked of the provider is ``lang-COUNTRY``)."""

    query: str = Field(min_length=1, max_length=500)
    limit: Annotated[int, Field(ge=1, le=MAX_RESULTS), JSON_INT] = 5
    tbs: str | None = Field(default=None, pattern=r"^qdr:[hdwmy]$")
    lang: str | None = Field(default=None, pattern=r"^[A-Za-z]{2,3}$")
    country: str | None = Field(default=None, pattern=r"^[A-Za-z]{2}$")
    timeout: Annotated[int, Field(ge=MIN_TIMEOUT_MS, le=MAX_TIMEOUT_MS), JSON_INT] = (
        DEFAULT_TIMEOUT_MS
    )
    ignore_invalid_urls: bool = Field(default=False, alias="ignoreInvalidURLs")
    scrape_options: ScrapeOptions | None = None
    filter: None = Field(default=None, description="Not served")
    location: None = Field(default=None, description="Not served: searching from a place")

    def language(self) -> str | None:
        if self.lang is None:
            return None
        return self.lang.lower() + (f"-{self.country.upper()}" if self.country else "")


class SearchAnswer(Answer):
    success: bool = True
    data: dict[str, list[dict[str, Any]]] = Field(
        description="Results by source (web, news, images): url, title, description (news: "
        "snippet, date; images: imageUrl); a scraped result is its Document besides"
    )
    warning: str | None = Field(default=None, description="What was left out, and why")
    credits_used: int = Field(default=0, alias="creditsUsed")


class SearchAnswerV1(BaseModel):
    success: bool = True
    data: list[dict[str, Any]] = Field(description="url, title, description (and its Document)")
    warning: str | None = None
