"""A crawl job: where it starts, how far it goes, which links it follows."""

from __future__ import annotations

from typing import Annotated, Literal

from pydantic import (
    BaseModel,
    ConfigDict,
    Field,
    field_validator,
)

from scrapejobs_shared.extraction.field_types import JSON_INT, MAX_URLS, HttpUrl
from scrapejobs_shared.extraction.user_regex import UnsupportedRegex, check_syntax


class CrawlSpec(BaseModel):
    """Follow links from ``start_url``: every discovered page becomes a task (once per job)."""

    model_config = ConfigDict(extra="forbid", strict=True)

    start_url: HttpUrl
    max_depth: Annotated[int, Field(ge=0, le=20), JSON_INT] = Field(
        default=2, description="Link hops from start_url"
    )
    max_pages: Annotated[int, Field(ge=1, le=MAX_URLS), JSON_INT] = Field(
        default=100, description="Tasks at most"
    )
    include: list[str] = Field(
        default_factory=list, max_length=50, description="Regexes; the URL path must match one"
    )
    exclude: list[str] = Field(
        default_factory=list, max_length=50, description="Regexes; the URL path must match none"
    )
    allow_subdomains: bool = Field(default=False, description="Follow links to subdomains too")
    under_start_path: bool = Field(
        default=False,
        description="Only pages whose path starts with start_url's path (its section of the site)",
    )
    ignore_query: bool = Field(
        default=False,
        description="Pages are followed without their query: URLs differing only in it are "
        "one page",
    )
    sitemap: Literal["skip", "include", "only"] = Field(
        default="skip",
        description="include: the site's sitemaps (/sitemap.xml, those robots.txt names, one "
        "level of index) add their pages (at depth 0, in the crawl's scope); only: those pages "
        "and start_url, no links followed; skip: links only",
    )

    @field_validator("include", "exclude")
    @classmethod
    def _regexes_compile(cls, patterns: list[str]) -> list[str]:
        for index, pattern in enumerate(patterns):
            if len(pattern) > 500:
                raise ValueError(f"pattern {index} is longer than 500 characters")
            try:
                check_syntax(pattern)  # compiled within its budget by the submission's rules
            except UnsupportedRegex as exc:
                raise ValueError(f"pattern {index} is not a valid regex: {exc}") from None
        return patterns
