"""A monitor's webhook events: ``monitor.page`` for each page a check found ``changed``, ``new``
or ``removed`` that its rules let through (``notify``), with its diff, and
``monitor.check.completed`` with the check's summary. They travel as the check's job's events
(the job carries the monitor's webhook), each with an id derived from the check and the page,
so a comparison done twice announces the same events and a receiver sees each once.

An event carries its data (a page's diff is read from no store when it is delivered): the
diff's text is cut at ``MAX_EVENT_TEXT`` characters (``text_truncated`` says so); the page
at ``GET /v1/monitors/{id}/checks/{check_id}/pages`` has it whole.
"""

from __future__ import annotations

import hashlib
from datetime import datetime
from typing import Any

from scrapejobs_shared.domain.monitor_checks import CheckPage, CheckRecord, PageStatus
from scrapejobs_shared.domain.webhook_events import WebhookEvent
from scrapejobs_shared.domain.webhook_spec import WebhookEventType

MAX_EVENT_TEXT = 64 * 1024
NOTIFIED = frozenset({PageStatus.CHANGED, PageStatus.NEW, PageStatus.REMOVED})


def notified(page: CheckPage) -> bool:
    """Whether a page of a check is announced (``monitor.page``)."""
    return page.status in NOTIFIED and page.notify


def page_event(check: CheckRecord, page: CheckPage, at: datetime) -> WebhookEvent:
    data = page_data(check, page) | {"diff": _capped(page.diff)}
    return _event(check, "monitor.page", page.key, at, data)


def check_event(check: CheckRecord, at: datetime) -> WebhookEvent:
    return _event(check, "monitor.check.completed", "", at, check_data(check))


def page_data(check: CheckRecord, page: CheckPage) -> dict[str, Any]:
    """A page of a check, as its event tells it (and Firecrawl's shapes are made from)."""
    return {
        "monitor_id": check.monitor_id,
        "check_id": check.id,
        "page_id": page.key,
        "url": page.url,
        "status": page.status.value,
        "status_code": page.status_code,
        "diff": page.diff,
        "notify": page.notify,
        "held_back_by": list(page.held_back_by),
        "error": page.error,
        "created_at": check.created_at.isoformat(),
    }


def check_data(check: CheckRecord) -> dict[str, Any]:
    """A check, as its event tells it (and Firecrawl's shapes are made from)."""
    return {
        "monitor_id": check.monitor_id,
        "check_id": check.id,
        "status": check.status.value,
        "trigger": check.trigger,
        "summary": dict(check.summary),
        "created_at": check.created_at.isoformat(),
        "finished_at": None if check.finished_at is None else check.finished_at.isoformat(),
        "error": check.error,
    }


def _event(
    check: CheckRecord, kind: WebhookEventType, what: str, at: datetime, data: dict[str, Any]
) -> WebhookEvent:
    digest = hashlib.sha256(f"{check.monitor_id}|{check.id}|{kind}|{what}".encode()).hexdigest()
    return WebhookEvent(f"evt_{digest[:32]}", kind, check.job_id or "", at, data)


def _capped(diff: dict[str, Any] | None) -> dict[str, Any] | None:
    text = (diff or {}).get("text")
    if diff is None or not isinstance(text, str) or len(text) <= MAX_EVENT_TEXT:
        return diff
    return diff | {"text": text[:MAX_EVENT_TEXT], "text_truncated": True}
