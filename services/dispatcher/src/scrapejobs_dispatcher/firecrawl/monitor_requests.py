"""Firecrawl's monitor requests (``POST /v2/monitor``, ``PATCH /v2/monitor/{id}``, as
firecrawl-py 4.55 sends them) and the native monitors they are.

| Firecrawl | native |
|---|---|
| ``name``, ``schedule`` (``cron`` or ``text``, ``timezone``) | the same |
| one target ``{"type": "scrape", "urls" or "url", "scrapeOptions"}`` | ``urls`` and the scrape options' ``options`` (translation.py; a ``json`` format an ``ai`` stage) |
| one target ``{"type": "crawl", "url", "crawlOptions", "scrapeOptions"}`` | a ``crawl`` (as ``POST /v2/crawl`` takes it) |
| ``webhook`` (``url``, ``headers``, ``metadata``, ``events``) | ``webhook`` in Firecrawl's shape (``monitor.page``, ``monitor.check.completed``) |
| ``retentionDays`` | ``retention_days`` |
| ``status`` (update) | ``status`` |

A monitor here has one target; ``search`` targets, email ``notification``, a ``goal`` and the
change judge (``judgeEnabled``) are not offered: each is a ``400`` naming it unless it asks for
nothing. A check always fetches its pages (``maxAge`` is not used), as the native one does.
"""  # noqa: E501

from __future__ import annotations

from typing import Annotated, Any, Literal

from pydantic import Field, ValidationInfo, field_validator
from pydantic.json_schema import SkipJsonSchema

from scrapejobs_dispatcher.firecrawl.format_translation import pipeline
from scrapejobs_dispatcher.firecrawl.request_models import (
    CrawlBody,
    ScrapeOptions,
    SdkRequest,
)
from scrapejobs_dispatcher.firecrawl.translation import (
    LABEL,
    crawl_request,
    job_options,
    validated,
)
from scrapejobs_shared.domain.monitors import MAX_RETENTION_DAYS, MonitorRequest, MonitorUpdate
from scrapejobs_shared.domain.webhook_spec import WEBHOOK_FORBIDDEN_HEADERS, WebhookMetadata
from scrapejobs_shared.extraction.field_types import (
    JSON_INT,
    MAX_URLS,
    HttpUrl,
    check_headers,
    headers_schema,
)
from scrapejobs_shared.options import InvalidOption, ServedHere
from scrapejobs_shared.options.camel_model import CamelModel

MonitorEventName = Literal["monitor.page", "monitor.check.completed"]
NOT_OFFERED = {
    "notification": "email notifications are not sent here (use webhook)",
    "goal": "checks are compared field by field and line by line, not judged by a model",
    "judgeEnabled": "checks are compared field by field and line by line, not judged by a model",
}


class MonitorSchedule(CamelModel):
    cron: str | None = Field(default=None, max_length=200)
    text: str | None = Field(default=None, max_length=200)
    timezone: str = Field(default="UTC", max_length=100)


class MonitorWebhook(CamelModel):
    """Where a monitor's events go, in Firecrawl's shape (signed ``X-Firecrawl-Signature``)."""

    url: HttpUrl
    headers: dict[str, str] | None = Field(
        default=None, max_length=20, json_schema_extra=headers_schema(WEBHOOK_FORBIDDEN_HEADERS)
    )
    metadata: WebhookMetadata | None = None
    events: list[MonitorEventName] | None = Field(default=None, min_length=1, max_length=2)

    @field_validator("headers")
    @classmethod
    def _headers_allowed(cls, value: dict[str, str] | None) -> dict[str, str] | None:
        return None if value is None else check_headers(value, WEBHOOK_FORBIDDEN_HEADERS)


class MonitorCrawlOptions(CrawlBody):
    """A crawl target's ``crawlOptions``: ``POST /v2/crawl``'s, its URL and scrape options
    the target's, its events the monitor's webhook's."""

    url: SkipJsonSchema[HttpUrl | None] = None  # type: ignore[assignment]  # the target's
    scrape_options: SkipJsonSchema[None] = None
    webhook: SkipJsonSchema[None] = None


class MonitorTarget(CamelModel):
    """What a monitor watches: URLs (``scrape``) or a crawl from ``url`` (``crawl``)."""

    id: str | None = Field(default=None, max_length=100)
    type: Literal["scrape", "crawl", "search"]
    urls: list[HttpUrl] | None = Field(default=None, min_length=1, max_length=MAX_URLS)
    url: HttpUrl | None = None
    scrape_options: ScrapeOptions | None = None
    crawl_options: MonitorCrawlOptions | None = None
    # a search target's: not offered
    queries: list[str] | None = None
    search_window: str | None = None
    include_domains: list[str] | None = None
    exclude_domains: list[str] | None = None
    max_results: int | None = None


def _not_offered(value: Any, name: str) -> Any:
    inert = value is None or value is False or (name == "notification" and not _emails(value))
    if not inert:
        raise ValueError(f"{NOT_OFFERED[name]}; leave {name} out")
    return value


def _emails(notification: Any) -> bool:
    email = (notification or {}).get("email") if isinstance(notification, dict) else None
    return bool(isinstance(email, dict) and email.get("enabled"))


class MonitorSettings(SdkRequest):
    """What both a monitor's creation and its change may carry but this service does not
    offer: each is refused unless it asks for nothing."""

    notification: dict[str, Any] | None = None
    goal: str | None = None
    judge_enabled: bool | None = None

    @field_validator("notification", "goal", "judge_enabled")
    @classmethod
    def _inert(cls, value: Any, info: ValidationInfo) -> Any:
        name = {"judge_enabled": "judgeEnabled"}.get(info.field_name or "", info.field_name)
        return _not_offered(value, name or "")


class MonitorBody(MonitorSettings):
    """``POST /v2/monitor``."""

    name: str = Field(min_length=1, max_length=200)
    schedule: MonitorSchedule
    targets: list[MonitorTarget] = Field(min_length=1, max_length=1)
    webhook: MonitorWebhook | None = None
    retention_days: Annotated[int, Field(ge=1, le=MAX_RETENTION_DAYS), JSON_INT] | None = None


class MonitorChange(MonitorSettings):
    """``PATCH /v2/monitor/{id}``: what it names changes, the rest is kept."""

    name: str | None = Field(default=None, min_length=1, max_length=200)
    status: Literal["active", "paused"] | None = None
    schedule: MonitorSchedule | None = None
    webhook: MonitorWebhook | None = None
    targets: list[MonitorTarget] | None = None
    retention_days: Annotated[int, Field(ge=1, le=MAX_RETENTION_DAYS), JSON_INT] | None = None

    @field_validator("targets")
    @classmethod
    def _targets_kept(cls, value: list[MonitorTarget] | None) -> list[MonitorTarget] | None:
        if value is not None:
            raise ValueError("a monitor's targets are kept: create another monitor to watch others")
        return value


def monitor_request(body: MonitorBody, here: ServedHere) -> MonitorRequest:
    """The native monitor of a Firecrawl one."""
    [target] = body.targets
    native: dict[str, Any] = _target(target, here)
    native |= {
        "name": body.name,
        "schedule": body.schedule.model_dump(exclude_none=True),
        "labels": {LABEL: "monitor"},
        "webhook": monitor_webhook(body.webhook),
    }
    if body.retention_days is not None:
        native["retention_days"] = body.retention_days
    return validated(MonitorRequest, native, target="targets[0]")


def monitor_update(change: MonitorChange) -> MonitorUpdate:
    native = change.model_dump(include={"name", "status", "retention_days"}, exclude_none=True)
    if change.schedule is not None:
        native["schedule"] = change.schedule.model_dump(exclude_none=True)
    if change.webhook is not None:
        native["webhook"] = monitor_webhook(change.webhook)
    return validated(MonitorUpdate, native)


def monitor_webhook(hook: MonitorWebhook | None) -> dict[str, Any] | None:
    if hook is None:
        return None
    return {
        "url": hook.url,
        "headers": hook.headers or {},
        "metadata": hook.metadata or {},
        "events": list(hook.events or ("monitor.page", "monitor.check.completed")),
        "shape": "firecrawl",
    }


def _target(target: MonitorTarget, here: ServedHere) -> dict[str, Any]:
    if target.type == "search":
        raise InvalidOption("targets[0].type", "search targets are not offered here")
    options = target.scrape_options or ScrapeOptions()
    if target.type == "crawl":
        if target.url is None:
            raise InvalidOption("targets[0].url", "a crawl target needs its url")
        crawl = (target.crawl_options or MonitorCrawlOptions()).model_copy(
            update={"url": target.url, "scrape_options": options}
        )
        job = crawl_request(crawl, here)
        return {"crawl": job.crawl, "options": job.options, "pipeline": job.pipeline}
    urls = target.urls or ([target.url] if target.url else None)
    if not urls:
        raise InvalidOption("targets[0].urls", "a scrape target needs its urls (or url)")
    return {"urls": urls, "options": job_options(options, here), "pipeline": pipeline(options)}
