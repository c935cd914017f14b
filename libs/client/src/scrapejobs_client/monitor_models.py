"""The API's answers about monitors, as the client reads them (unknown keys are kept: a newer
API's fields never break an older client)."""

from __future__ import annotations

from datetime import datetime
from typing import Any

from pydantic import Field

from scrapejobs_client.models import ApiModel


class Monitor(ApiModel):
    id: str
    name: str
    status: str  # active, paused
    schedule: dict[str, Any]
    rules: dict[str, Any] = Field(default_factory=dict)
    retention_days: int
    created_at: datetime
    updated_at: datetime
    next_check_at: datetime | None = None
    last_check_id: str | None = None
    last_check_at: datetime | None = None
    checks: int = 0


class MonitorList(ApiModel):
    monitors: list[Monitor]
    next_page_token: str | None = None


class MonitorCheck(ApiModel):
    id: str
    monitor_id: str
    status: str  # queued, running, completed, partial, failed, skipped_overlap
    trigger: str  # manual, scheduled
    job_id: str | None = None
    created_at: datetime
    finished_at: datetime | None = None
    summary: dict[str, int] = Field(default_factory=dict)

    @property
    def finished(self) -> bool:
        return self.status in ("completed", "partial", "failed", "skipped_overlap")


class MonitorCheckList(ApiModel):
    checks: list[MonitorCheck]
    next_page_token: str | None = None


class MonitorPage(ApiModel):
    url: str
    status: str  # same, new, changed, removed, error
    status_code: int | None = None
    diff: dict[str, Any] | None = None
    notify: bool = False
    held_back_by: list[str] = Field(default_factory=list)
    error: str | None = None


class MonitorPages(ApiModel):
    check: MonitorCheck
    pages: list[MonitorPage]
    next_page_token: str | None = None
