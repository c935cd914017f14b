"""Firecrawl's ``webhook`` option (a URL, or where and which events to POST) and the native
webhook it asks for: Firecrawl's bodies and signature, its events."""

from __future__ import annotations

from typing import Annotated, Any, Literal

from pydantic import Field, field_validator

from scrapejobs_shared.domain.webhook_spec import WEBHOOK_FORBIDDEN_HEADERS, WebhookMetadata
from scrapejobs_shared.extraction.field_types import HttpUrl, check_headers, headers_schema
from scrapejobs_shared.firecrawl.webhook_bodies import EVENTS as WEBHOOK_EVENTS
from scrapejobs_shared.options.camel_model import CamelModel

WebhookEventName = Literal["started", "page", "completed", "failed"]


class Webhook(CamelModel):
    """A webhook as Firecrawl takes it: its events are POSTed in Firecrawl's shape, signed
    ``X-Firecrawl-Signature: sha256=<hex HMAC-SHA256 of the body>`` with the deployment's
    webhook secret."""

    url: HttpUrl = Field(description="http(s) URL (a blocked destination is never called)")
    headers: dict[str, str] | None = Field(
        default=None,
        max_length=20,
        description="Extra request headers",
        json_schema_extra=headers_schema(WEBHOOK_FORBIDDEN_HEADERS),
    )
    metadata: WebhookMetadata | None = Field(default=None, description="Echoed in every event")
    events: list[WebhookEventName] | None = Field(
        default=None,
        min_length=1,
        max_length=4,
        description="started, page (each page that ended), completed, failed (or cancelled); "
        "default: all",
    )

    @field_validator("headers")
    @classmethod
    def _headers_allowed(cls, value: dict[str, str] | None) -> dict[str, str] | None:
        return None if value is None else check_headers(value, WEBHOOK_FORBIDDEN_HEADERS)


WebhookOption = Annotated[HttpUrl | Webhook, Field(union_mode="left_to_right")]


def webhook(option: str | Webhook | None) -> dict[str, Any] | None:
    """The native webhook of a Firecrawl one: Firecrawl's bodies and signature, its events."""
    if option is None:
        return None
    hook = Webhook(url=option) if isinstance(option, str) else option
    names: list[str] = list(hook.events or WEBHOOK_EVENTS)
    return {
        "url": hook.url,
        "headers": hook.headers or {},
        "metadata": hook.metadata or {},
        "events": [native for name in dict.fromkeys(names) for native in WEBHOOK_EVENTS[name]],
        "shape": "firecrawl",
    }
