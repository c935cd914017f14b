"""Monitors: a job's targets, extraction and options checked on a schedule, each check's pages
compared with the previous check's (``same``, ``new``, ``changed``, ``removed``, ``error``).

A monitor is created from what a job takes (``url``, ``urls`` or ``crawl``, ``extract``,
``options``, ``pipeline``, ``webhook``, ``priority``, ``labels``) plus its ``name``,
``schedule``, noise ``rules`` and how many days its checks are kept. Each check is carried out
as an ordinary job, so politeness, lanes, rendering and every delivery guarantee apply.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from enum import StrEnum

from pydantic import BaseModel, ConfigDict, Field, ValidationInfo, field_validator

from scrapejobs_shared.domain.jobspec import JobRequest
from scrapejobs_shared.domain.monitor_rules import MonitorRules
from scrapejobs_shared.domain.monitor_schedule import Schedule
from scrapejobs_shared.domain.webhook_spec import WebhookSpec

DEFAULT_RETENTION_DAYS = 30
MAX_RETENTION_DAYS = 365


class MonitorStatus(StrEnum):
    ACTIVE = "active"
    PAUSED = "paused"


class MonitorRequest(JobRequest):
    """Body of ``POST /v1/monitors``: what a job takes, and the monitor's own settings."""

    name: str = Field(min_length=1, max_length=200, description="What the monitor watches")
    schedule: Schedule = Field(description="When it checks: cron or words, in a time zone")
    rules: MonitorRules = Field(
        default_factory=MonitorRules, description="What a change must be to be notified"
    )
    status: MonitorStatus = Field(
        default=MonitorStatus.ACTIVE, description="A paused monitor runs no scheduled check"
    )
    retention_days: int = Field(
        default=DEFAULT_RETENTION_DAYS,
        ge=1,
        le=MAX_RETENTION_DAYS,
        description="How long its checks, their pages and diffs are kept",
    )

    @field_validator("rules")
    @classmethod
    def _rules_name_extracted_fields(
        cls, rules: MonitorRules, info: ValidationInfo
    ) -> MonitorRules:
        check_rule_fields(rules, info.data.get("extract") or {})  # extract is checked first
        return rules

    def job_request(self) -> JobRequest:
        """The job a check of this monitor runs."""
        monitor_only = {"name", "schedule", "rules", "status", "retention_days"}
        return JobRequest.model_validate(
            self.model_dump(mode="json", exclude=monitor_only, exclude_none=True), strict=False
        )


class MonitorUpdate(BaseModel):
    """Body of ``PATCH /v1/monitors/{id}``: the settings to change, the others kept."""

    model_config = ConfigDict(extra="forbid", strict=True)

    name: str | None = Field(default=None, min_length=1, max_length=200)
    schedule: Schedule | None = None
    rules: MonitorRules | None = None
    status: MonitorStatus | None = None
    retention_days: int | None = Field(default=None, ge=1, le=MAX_RETENTION_DAYS)
    webhook: WebhookSpec | None = None


def check_rule_fields(rules: MonitorRules, extract: dict[str, object]) -> None:
    unknown = sorted(rules.fields_named() - set(extract))
    if unknown:
        raise ValueError(
            f"rules name fields the monitor does not extract: {', '.join(unknown)} "
            "(add them to 'extract')"
        )


@dataclass(frozen=True, slots=True)
class MonitorRecord:
    id: str
    tenant: str
    request: MonitorRequest
    created_at: datetime
    updated_at: datetime
    next_check_at: datetime | None  # None while paused
    last_check_id: str | None = None
    last_check_at: datetime | None = None
    checks: int = 0  # how many checks it started

    @property
    def status(self) -> MonitorStatus:
        return self.request.status

    @property
    def name(self) -> str:
        return self.request.name
