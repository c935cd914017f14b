"""A monitor's checks and pages in the shapes firecrawl-py 4.55 reads (``MonitorCheck``,
``MonitorCheckPage``, ``MonitorSummary``), made from their native data (monitor_events.py's
``check_data`` and ``page_data``): for ``/v2/monitor`` and for a Firecrawl-shaped webhook's
``monitor.page`` and ``monitor.check.completed`` events.

| native | Firecrawl |
|---|---|
| a check's ``summary.total`` | ``summary.totalPages`` |
| a page's ``diff.fields`` | ``diff.json`` (each field's ``previous`` and ``current``) |
| a page's ``diff.text`` | ``diff.text`` (a unified diff of its markdown) |
| a page's key (a digest of its URL) | its ``id`` |

A monitor has one target (its URLs, or its crawl): ``targetId`` is ``TARGET_ID``.
"""

from __future__ import annotations

from collections.abc import Mapping
from datetime import datetime
from typing import Any

from scrapejobs_shared.domain.monitors import MonitorRecord

TARGET_ID = "target-0"


def firecrawl_summary(summary: Mapping[str, int]) -> dict[str, int]:
    counts = {
        key: int(summary.get(key, 0)) for key in ("same", "changed", "new", "removed", "error")
    }
    return {"totalPages": int(summary.get("total", 0)), **counts}


def firecrawl_check(check: Mapping[str, Any]) -> dict[str, Any]:
    """A ``MonitorCheck`` from ``check_data``."""
    finished = check.get("finished_at")
    return {
        "id": check["check_id"],
        "monitorId": check["monitor_id"],
        "status": check["status"],
        "trigger": check["trigger"],
        "startedAt": check["created_at"],
        "finishedAt": finished,
        "billingStatus": "not_applicable",
        "summary": firecrawl_summary(check.get("summary") or {}),
        "error": check.get("error"),
        "createdAt": check["created_at"],
        "updatedAt": finished or check["created_at"],
    }


def firecrawl_page(page: Mapping[str, Any]) -> dict[str, Any]:
    """A ``MonitorCheckPage`` from ``page_data``."""
    diff = page.get("diff")
    shaped: dict[str, Any] = {
        "id": page["page_id"],
        "targetId": TARGET_ID,
        "url": page["url"],
        "status": page["status"],
        "statusCode": page.get("status_code"),
        "error": page.get("error"),
        "createdAt": page["created_at"],
    }
    if diff is not None:
        shaped["diff"] = {"text": diff.get("text") or None, "json": diff.get("fields") or None}
    return shaped


def firecrawl_monitor(monitor: MonitorRecord) -> dict[str, Any]:
    """A ``Monitor`` (its webhook's secret left out)."""
    request = monitor.request
    schedule = request.schedule
    target: dict[str, Any]
    if request.crawl is not None:
        target = {"id": TARGET_ID, "type": "crawl", "url": request.crawl.start_url}
    else:
        target = {"id": TARGET_ID, "type": "scrape", "urls": request.target_urls()}
    hook = request.webhook
    webhook = None
    if hook is not None:
        webhook = {
            "url": hook.url,
            "headers": dict(hook.headers),
            "metadata": dict(hook.metadata),
            "events": list(hook.events),
        }
    return {
        "id": monitor.id,
        "name": request.name,
        "status": request.status.value,
        "schedule": {
            "cron": schedule.expression(),
            "text": schedule.text,
            "timezone": schedule.timezone,
        },
        "nextRunAt": _iso(monitor.next_check_at),
        "lastRunAt": _iso(monitor.last_check_at),
        "currentCheckId": monitor.last_check_id,
        "targets": [target],
        "webhook": webhook,
        "notification": None,
        "retentionDays": request.retention_days,
        "createdAt": monitor.created_at.isoformat(),
        "updatedAt": monitor.updated_at.isoformat(),
    }


def _iso(moment: datetime | None) -> str | None:
    return None if moment is None else moment.isoformat()
