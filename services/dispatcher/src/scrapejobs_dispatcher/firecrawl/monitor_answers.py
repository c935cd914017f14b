"""The bodies of ``/v2/monitor``'s answers, as firecrawl-py 4.55 parses them (its ``MonitorShape``,
``MonitorCheck``, ``MonitorCheckDetail`` and ``MonitorCheckPage``): what the OpenAPI document
says they return. Their content is made by shared/firecrawl/monitor_shapes.py."""

from __future__ import annotations

from typing import Any, Generic, Literal, TypeVar

from pydantic import BaseModel, ConfigDict, Field
from pydantic.alias_generators import to_camel

T = TypeVar("T")


class Shape(BaseModel):
    """camelCase on the wire, as Firecrawl's."""

    model_config = ConfigDict(alias_generator=to_camel, populate_by_name=True, extra="forbid")


class ScheduleShape(Shape):
    cron: str = Field(description="Always given, also for a schedule made from words")
    text: str | None
    timezone: str


class MonitorShape(Shape):
    id: str
    name: str
    status: Literal["active", "paused"]
    schedule: ScheduleShape
    next_run_at: str | None = Field(description="null while paused")
    last_run_at: str | None
    current_check_id: str | None = Field(description="Its last check")
    targets: list[dict[str, Any]] = Field(
        description='One: {"id", "type": "scrape", "urls"} or {"id", "type": "crawl", "url"}'
    )
    webhook: dict[str, Any] | None = Field(description="url, headers, metadata, events")
    notification: None = None
    retention_days: int
    created_at: str
    updated_at: str


class SummaryShape(Shape):
    total_pages: int
    same: int
    changed: int
    new: int
    removed: int
    error: int


class CheckShape(Shape):
    id: str
    monitor_id: str
    status: Literal["queued", "running", "completed", "partial", "failed", "skipped_overlap"]
    trigger: Literal["manual", "scheduled"]
    started_at: str
    finished_at: str | None
    billing_status: Literal["not_applicable"]
    summary: SummaryShape
    error: str | None = Field(default=None, description="Why a failed check could not start")
    created_at: str
    updated_at: str


class PageDiffShape(Shape):
    text: str | None = Field(description="A unified diff of the page's markdown")
    json_: dict[str, Any] | None = Field(
        alias="json", description="Each changed field's previous and current value"
    )


class PageShape(Shape):
    id: str = Field(description="A digest of the page's URL")
    target_id: str
    url: str
    status: Literal["same", "new", "changed", "removed", "error"]
    status_code: int | None
    error: str | None
    created_at: str
    diff: PageDiffShape | None = None


class CheckDetailShape(CheckShape):
    pages: list[PageShape]
    next: str | None = Field(description="The URL of the next page of pages (null: the last)")


class Answered(BaseModel, Generic[T]):
    """Firecrawl's envelope of an answer: ``success`` and the ``data``."""

    success: bool = True
    data: T


class MonitorAnswer(Answered[MonitorShape]):
    pass


class MonitorsAnswer(Answered[list[MonitorShape]]):
    pass


class CheckAnswer(Answered[CheckShape]):
    pass


class ChecksAnswer(Answered[list[CheckShape]]):
    pass


class CheckDetailAnswer(Answered[CheckDetailShape]):
    next: str | None = Field(description="The URL of the next page of pages (null: the last)")


class MonitorDeleted(BaseModel):
    success: bool = True
