"""The bodies of Firecrawl's v2 answers, as its SDKs parse them."""

from __future__ import annotations

from datetime import datetime
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field

from scrapejobs_shared.domain.statuses import JobStatus

BatchStatus = Literal["scraping", "completed", "failed", "cancelled"]


class Answer(BaseModel):
    model_config = ConfigDict(populate_by_name=True)


class ScrapeAnswer(Answer):
    success: bool = True
    data: dict[str, Any] = Field(
        description="The Document: markdown, html, rawHtml, links, images, json (as asked "
        "for) and metadata"
    )


class BatchStarted(Answer):
    success: bool = True
    id: str = Field(description="The batch's id (the native job's id)")
    url: str = Field(description="Where its status is read")
    invalid_urls: list[str] | None = Field(
        default=None,
        alias="invalidURLs",
        description="With ignoreInvalidURLs: the URLs left out (null when none were)",
    )


class CrawlStarted(Answer):
    success: bool = True
    id: str = Field(description="The crawl's id (the native job's id)")
    url: str = Field(description="Where its status is read")


class ActiveCrawl(Answer):
    id: str
    team_id: str = Field(alias="teamId", description="Always empty: one team per deployment")
    url: str = Field(description="Where the crawl started")
    options: dict[str, Any] | None = None


class ActiveCrawls(Answer):
    success: bool = True
    crawls: list[ActiveCrawl]


class BatchStatusAnswer(Answer):
    success: bool = True
    status: BatchStatus
    total: int = Field(description="Pages in the batch")
    completed: int = Field(description="Pages that have ended (succeeded or not)")
    credits_used: int = Field(
        alias="creditsUsed",
        description="Pages fetched so far (a credit: see /v2/team/credit-usage); reused pages "
        "and fetches without a response cost nothing",
    )
    expires_at: datetime = Field(alias="expiresAt", description="When the results are deleted")
    next: str | None = Field(description="The next page of data (null on the last one)")
    data: list[dict[str, Any]] = Field(description="Documents of the pages that succeeded")


class Cancelled(Answer):
    success: bool = True
    status: Literal["cancelled"] = "cancelled"


class PageError(Answer):
    id: str
    timestamp: datetime | None
    url: str
    error: str


class ErrorsAnswer(Answer):
    errors: list[PageError] = Field(description="Pages that failed, most recent first")
    robots_blocked: list[str] = Field(
        alias="robotsBlocked", description="URLs robots.txt kept from being fetched"
    )


class MapLink(Answer):
    url: str
    title: str | None = None
    description: str | None = None


class MapAnswer(Answer):
    success: bool = True
    links: list[MapLink] = Field(description="The site's URLs: the start URL, then those found")


def batch_status(status: JobStatus) -> BatchStatus:
    if status is JobStatus.COMPLETED:
        return "completed"
    if status is JobStatus.CANCELLED:
        return "cancelled"
    return "scraping"
