"""Monitors: a job's targets, extraction and options checked on a schedule, each check's pages
compared with the previous check's (``same``, ``new``, ``changed``, ``removed``, ``error``).

A monitor is created from what a job takes (``url``, ``urls``, ``crawl`` or ``search``, ``extract``,
``options``, ``pipeline``, ``webhook``, ``priority``, ``labels``) plus its ``name``,
``schedule``, noise ``rules`` and how many days its checks are kept. Each check is carried out
as an ordinary job, so politeness, lanes, rendering and every delivery guarantee apply.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from datetime import datetime, timedelta
from enum import StrEnum
from typing import Annotated

from pydantic import (
    BaseModel,
    ConfigDict,
    Field,
    ValidationInfo,
    field_validator,
    model_validator,
)
from pydantic.json_schema import SkipJsonSchema

from scrapejobs_shared.domain.jobspec import JobRequest
from scrapejobs_shared.domain.monitor_rules import MonitorRules
from scrapejobs_shared.domain.monitor_schedule import Schedule
from scrapejobs_shared.domain.webhook_spec import MonitorWebhookSpec
from scrapejobs_shared.extraction.field_types import JSON_INT
from scrapejobs_shared.options.content import MAX_EXCLUDED
from scrapejobs_shared.pipeline.spec import ai_stage_index

DEFAULT_RETENTION_DAYS = 30
MAX_RETENTION_DAYS = 365


class MonitorStatus(StrEnum):
    ACTIVE = "active"
    PAUSED = "paused"


class MonitorRequest(JobRequest):
    """Body of ``POST /v1/monitors``: what a job takes, and the monitor's own settings."""

    name: str = Field(min_length=1, max_length=200, description="What the monitor watches")
    webhook: MonitorWebhookSpec | None = Field(
        default=None,
        description="POST the monitor's events here, signed (Standard Webhooks): each page a "
        "check found changed, new or removed (monitor.page), each check's end "
        "(monitor.check.completed)",
    )
    schedule: Schedule = Field(description="When it checks: cron or words, in a time zone")
    rules: MonitorRules = Field(
        default_factory=MonitorRules, description="What a change must be to be notified"
    )
    status: MonitorStatus = Field(
        default=MonitorStatus.ACTIVE,
        strict=False,  # the status's name, as JSON has no enums
        description="A paused monitor runs no scheduled check",
    )
    retention_days: Annotated[int, JSON_INT] = Field(
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

    @model_validator(mode="after")
    def _checks_are_jobs(self) -> MonitorRequest:
        self.job_request()  # a monitor whose checks could not run is refused at once
        return self

    def ai_field(self) -> str | None:
        """Where its ``ai`` stage answers (None without one): a check compares that answer's
        fields too (an object's, each on its own)."""
        index = ai_stage_index(self.pipeline)
        if index is None:
            return None
        return str(getattr(self.pipeline[index].options, "into", None) or "") or None

    def job_request(self) -> JobRequest:
        """The job a check of this monitor runs: the monitor's, with the page's markdown
        (compared line by line), the rules' ignored selectors left out of it, and every page
        asked of its site (never answered from the page cache)."""
        body = self.model_dump(mode="json", include=set(JobRequest.model_fields), exclude_none=True)
        options = body.setdefault("options", {})
        if "markdown" not in options.get("formats", []):
            options["formats"] = [*options.get("formats", []), "markdown"]
        content = options.setdefault("content", {})
        exclude = [*content.get("exclude", []), *self.rules.ignore_selectors]
        if len(exclude) > MAX_EXCLUDED:
            raise ValueError(
                f"options.content.exclude and rules.ignore_selectors together hold at most "
                f"{MAX_EXCLUDED} selectors"
            )
        content["exclude"] = exclude
        options["cache_max_age_s"] = 0
        return JobRequest.model_validate(body, strict=False)


class MonitorUpdate(BaseModel):
    """Body of ``PATCH /v1/monitors/{id}``: the settings to change, the others kept. Only the
    webhook may be null (removed)."""

    model_config = ConfigDict(extra="forbid", strict=True)

    name: Annotated[str, Field(min_length=1, max_length=200)] | SkipJsonSchema[None] = None
    schedule: Schedule | SkipJsonSchema[None] = None
    rules: MonitorRules | SkipJsonSchema[None] = None
    status: Annotated[MonitorStatus, Field(strict=False)] | SkipJsonSchema[None] = None
    retention_days: Annotated[
        Annotated[int, Field(ge=1, le=MAX_RETENTION_DAYS)] | SkipJsonSchema[None], JSON_INT
    ] = None
    webhook: MonitorWebhookSpec | None = Field(default=None, description="null removes the webhook")

    @field_validator("name", "schedule", "rules", "status", "retention_days", mode="before")
    @classmethod
    def _not_null(cls, value: object) -> object:
        if value is None:
            raise ValueError("cannot be null (leave it out to keep it)")
        return value


def check_rule_fields(rules: MonitorRules, extract: Mapping[str, object]) -> None:
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

    def stamp(self, now: datetime) -> datetime:
        """The ``updated_at`` of a change made at ``now``: always later than this version's
        (a save is guarded by it, so two versions never share one)."""
        return max(now, self.updated_at + timedelta(microseconds=1))

    @property
    def name(self) -> str:
        return self.request.name
