"""Webhook events as Firecrawl sends them: ``{"success", "type", "id", "webhookId", "data",
"metadata", "error", "timestamp"}``, typed ``crawl.*`` or ``batch_scrape.*`` (``started``,
``page``, ``completed``, ``failed``), signed ``X-Firecrawl-Signature: sha256=<hex HMAC-SHA256
of the raw body>``, so a receiver written for Firecrawl verifies and reads them unchanged.

| native event | Firecrawl's | ``data`` |
|---|---|---|
| ``job.started`` | ``<kind>.started`` | ``[]`` |
| ``task.finished`` | ``<kind>.page`` (``success`` false for a failed page) | ``[Document]`` |
| ``job.completed`` | ``<kind>.completed`` | ``[]`` |
| ``job.failed``, ``job.cancelled`` | ``<kind>.failed`` (``success`` false) | ``[]`` |
| ``monitor.page`` | ``monitor.page`` (``id``: the monitor's) | ``[MonitorCheckPage]`` |
| ``monitor.check.completed`` | ``monitor.check.completed`` | ``[MonitorCheck]`` |
"""

from __future__ import annotations

import hashlib
import hmac
import json
import uuid
from collections.abc import Mapping
from typing import Any

from scrapejobs_shared.domain.records import TaskRecord
from scrapejobs_shared.domain.statuses import TaskStatus
from scrapejobs_shared.domain.webhook_events import WebhookEvent
from scrapejobs_shared.domain.webhook_spec import MONITOR_EVENTS, WebhookEventType
from scrapejobs_shared.firecrawl.documents import document
from scrapejobs_shared.firecrawl.monitor_shapes import firecrawl_check, firecrawl_page

SIGNATURE_HEADER = "x-firecrawl-signature"
# Firecrawl's event names (a webhook's ``events``) -> the native events they are
EVENTS: dict[str, tuple[WebhookEventType, ...]] = {
    "started": ("job.started",),
    "page": ("task.finished",),
    "completed": ("job.completed",),
    "failed": ("job.failed", "job.cancelled"),
}
_NAMES = {native: name for name, natives in EVENTS.items() for native in natives}
_ERRORS: dict[str, str] = {
    "job.failed": "every page of the job failed",
    "job.cancelled": "the job was cancelled",
}


def firecrawl_body(
    event: WebhookEvent, *, crawl: bool, metadata: Mapping[str, Any], page: TaskRecord | None
) -> str:
    """The JSON body of ``event`` (``page``: the finished task of a ``task.finished``)."""
    if event.type in MONITOR_EVENTS:
        return _monitor_body(event, metadata)
    kind = "crawl" if crawl else "batch_scrape"
    error = _ERRORS.get(event.type)
    data: list[dict[str, Any]] = []
    if page is not None:
        data = [document(page)]
        if page.status is not TaskStatus.SUCCEEDED:
            error = page.error or page.status.value
    body: dict[str, Any] = {
        "success": error is None,
        "type": f"{kind}.{_NAMES[event.type]}",
        "id": event.job_id,
        "webhookId": webhook_id(event),
        "data": data,
        "metadata": dict(metadata),
        "timestamp": event.occurred_at.isoformat(),
    }
    if error is not None:
        body["error"] = error
    return json.dumps(body, separators=(",", ":"))


def _monitor_body(event: WebhookEvent, metadata: Mapping[str, Any]) -> str:
    """A monitor's event: ``data`` holds the page (``MonitorCheckPage``) or the check
    (``MonitorCheck``); ``id`` is the monitor's."""
    if event.type == "monitor.page":
        data = firecrawl_page(event.data)
        error = data["error"] if data["status"] == "error" else None
    else:
        data = firecrawl_check(event.data)
        error = "the check failed" if data["status"] == "failed" else None
    body: dict[str, Any] = {
        "success": error is None,
        "type": event.type,
        "id": event.data.get("monitor_id"),
        "webhookId": webhook_id(event),
        "data": [data],
        "metadata": dict(metadata),
        "timestamp": event.occurred_at.isoformat(),
    }
    if error is not None:
        body["error"] = error
    return json.dumps(body, separators=(",", ":"))


def webhook_id(event: WebhookEvent) -> str:
    """The event's id as the UUID Firecrawl's ``webhookId`` is (the same on every retry)."""
    return str(uuid.UUID(hex=event.id.removeprefix("evt_")[:32]))


def signature(secret: str, body: str) -> str:
    """``sha256=<hex HMAC-SHA256 of body>``, keyed with ``secret`` as written (UTF-8)."""
    digest = hmac.new(secret.encode(), body.encode(), hashlib.sha256).hexdigest()
    return f"sha256={digest}"
