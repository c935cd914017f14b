"""A job's webhook: where its events go, which events, in which shape, with which headers."""

from __future__ import annotations

import base64
import binascii
from typing import Annotated, Literal

from pydantic import (
    AfterValidator,
    BaseModel,
    ConfigDict,
    Field,
    field_validator,
)

from scrapejobs_shared.extraction.field_types import (
    FORBIDDEN_HEADERS,
    HttpUrl,
    check_headers,
    headers_schema,
    not_reserved,
)

WebhookEventType = Literal[
    "job.started",
    "task.finished",
    "job.completed",
    "job.failed",
    "job.cancelled",
    "monitor.page",
    "monitor.check.completed",
]


# a monitor's: a page that changed, is new or was removed (its diff); a check's end (its summary)
MONITOR_EVENTS: tuple[WebhookEventType, ...] = ("monitor.page", "monitor.check.completed")
WEBHOOK_EVENTS: tuple[WebhookEventType, ...] = (
    "job.started",
    "task.finished",
    "job.completed",
    "job.failed",
    "job.cancelled",
    *MONITOR_EVENTS,
)


JOB_END_EVENTS: tuple[WebhookEventType, ...] = ("job.completed", "job.failed", "job.cancelled")


WebhookShape = Literal["standard", "firecrawl"]
# what a webhook echoes in every event: a few short strings, as Firecrawl's SDKs type it


WebhookMetadata = Annotated[
    dict[
        Annotated[str, Field(min_length=1, max_length=100), AfterValidator(not_reserved)],
        Annotated[str, Field(max_length=500)],
    ],
    Field(max_length=20),
]
# The signature and the body's type are the sender's (Standard Webhooks, Firecrawl's), never
# the job's.


WEBHOOK_FORBIDDEN_HEADERS = FORBIDDEN_HEADERS | {
    "webhook-id",
    "webhook-timestamp",
    "webhook-signature",
    "x-firecrawl-signature",
    "content-type",
}


class WebhookSpec(BaseModel):
    """Where the job's events are POSTed. ``standard``: signed per Standard Webhooks
    (webhook-id, webhook-timestamp, webhook-signature: v1,<base64 HMAC-SHA256 of
    id.timestamp.body>). ``firecrawl``: the bodies and signature Firecrawl sends (for receivers
    written against Firecrawl's webhooks)."""

    model_config = ConfigDict(extra="forbid", strict=True)

    url: HttpUrl
    events: list[WebhookEventType] = Field(
        default_factory=lambda: list(JOB_END_EVENTS),
        min_length=1,
        max_length=len(WEBHOOK_EVENTS),
        description="job.started (on submission), task.finished (each page that ended "
        "succeeded or failed), job.completed, job.failed (the job ended and every task "
        "failed), job.cancelled; a monitor's: monitor.page (a page changed, new or removed, "
        "with its diff), monitor.check.completed (a check's summary). Default: the three job "
        "ends (a monitor's: its two)",
    )
    headers: dict[str, str] = Field(
        default_factory=dict,
        max_length=20,
        description="Extra request headers (not the signature's)",
        json_schema_extra=headers_schema(WEBHOOK_FORBIDDEN_HEADERS),
    )
    secret: str | None = Field(
        default=None,
        pattern=r"^whsec_(?:[A-Za-z0-9+/]{4}){5,15}(?:[A-Za-z0-9+/]{4}|[A-Za-z0-9+/]{3}=|[A-Za-z0-9+/]{2}==)$",
        description="Signing key, whsec_ + base64 of 16 to 48 random bytes; without one, the "
        "deployment's keys sign",
    )
    metadata: WebhookMetadata = Field(
        default_factory=dict, description="Echoed in every event's body"
    )
    shape: WebhookShape = Field(
        default="standard",
        description="standard: Standard Webhooks; firecrawl: Firecrawl's bodies and its "
        "X-Firecrawl-Signature: sha256=<hex HMAC-SHA256 of the body> (keyed with the secret "
        "as written)",
    )

    def wants(self, event: WebhookEventType) -> bool:
        return event in self.events

    @field_validator("headers")
    @classmethod
    def _headers_allowed(cls, value: dict[str, str]) -> dict[str, str]:
        return check_headers(value, WEBHOOK_FORBIDDEN_HEADERS)

    @field_validator("secret")
    @classmethod
    def _secret_decodes(cls, value: str | None) -> str | None:
        if value is not None:
            try:
                key = base64.b64decode(value.removeprefix("whsec_"), validate=True)
            except binascii.Error:
                raise ValueError("the secret is not base64 after whsec_") from None
            if not 16 <= len(key) <= 48:
                raise ValueError("the secret must hold 16 to 48 bytes")
        return value


class MonitorWebhookSpec(WebhookSpec):
    """A monitor's webhook: as a job's, its events by default the monitor's own."""

    events: list[WebhookEventType] = Field(
        default_factory=lambda: list(MONITOR_EVENTS),
        min_length=1,
        max_length=len(WEBHOOK_EVENTS),
        description="monitor.page (each page a check found changed, new or removed, with its "
        "diff; not one a noise rule held back), monitor.check.completed (a check's summary); "
        "job events, if listed, come from each check's job. Default: the monitor's two",
    )
