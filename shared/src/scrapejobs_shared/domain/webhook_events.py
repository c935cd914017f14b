"""Webhook events: a job's start, each page's end, and a job's end, each with an id that is the
same for every delivery attempt of one event (Standard Webhooks' ``webhook-id``, Firecrawl's
``webhookId``); a job's end has a different one for its next completion (after a replay).

A page's event travels with its task's id and URL only: its body is made from the stored task
when it is delivered (the sender reads it), so a message stays small whatever the page holds."""

from __future__ import annotations

import hashlib
import json
from collections.abc import Mapping
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from scrapejobs_shared.domain.records import JobRecord, TaskRecord
from scrapejobs_shared.domain.statuses import JobStatus, TaskStatus
from scrapejobs_shared.domain.webhook_spec import WebhookEventType
from scrapejobs_shared.errors import InvalidInput


class MalformedEvent(InvalidInput):
    """A webhook message that is not an event this code wrote."""


@dataclass(frozen=True, slots=True)
class WebhookEvent:
    id: str
    type: WebhookEventType
    job_id: str
    occurred_at: datetime
    data: Mapping[str, Any]

    def body(
        self, data: Mapping[str, Any] | None = None, metadata: Mapping[str, Any] | None = None
    ) -> str:
        """The Standard Webhooks JSON the receiver gets (and the signature covers): ``data``
        in place of the event's own (a page's, read when delivered), the webhook's
        ``metadata`` when it has some."""
        payload: dict[str, Any] = {
            "type": self.type,
            "timestamp": self.occurred_at.isoformat(),
            "data": self.data if data is None else data,
        }
        if metadata:
            payload["metadata"] = metadata
        return json.dumps(payload, separators=(",", ":"), sort_keys=True)

    def to_message(self) -> bytes:
        return json.dumps(
            {
                "id": self.id,
                "type": self.type,
                "job_id": self.job_id,
                "occurred_at": self.occurred_at.isoformat(),
                "data": self.data,
            }
        ).encode()

    @classmethod
    def from_message(cls, data: bytes) -> WebhookEvent:
        try:
            doc = json.loads(data)
            return cls(
                id=str(doc["id"]),
                type=doc["type"],
                job_id=str(doc["job_id"]),
                occurred_at=datetime.fromisoformat(doc["occurred_at"]),
                data=dict(doc["data"]),
            )
        except (ValueError, KeyError, TypeError) as exc:
            raise MalformedEvent(f"not a webhook event: {exc}") from None


def job_ended(job: JobRecord, counts: Mapping[TaskStatus, int]) -> WebhookEvent:
    """The event of a job that just ended: cancelled, failed (it had tasks and none
    succeeded) or completed."""
    if job.status is JobStatus.CANCELLED:
        kind: WebhookEventType = "job.cancelled"
    elif counts.get(TaskStatus.SUCCEEDED, 0) == 0 and sum(counts.values()) > 0:
        kind = "job.failed"
    else:
        kind = "job.completed"
    at = job.finished_at or job.updated_at
    data = {
        "job_id": job.id,
        "status": job.status.value,
        "total": sum(counts.values()),
        "counts": {status.value: counts.get(status, 0) for status in TaskStatus},
        "labels": dict(job.labels),
        "finished_at": at.isoformat(),
    }
    return WebhookEvent(_event_id(job.id, kind, at.isoformat()), kind, job.id, at, data)


def job_started(job: JobRecord) -> WebhookEvent:
    """The event of a job just submitted (a crawl's total grows as it finds pages)."""
    data = {
        "job_id": job.id,
        "status": job.status.value,
        "total": job.total,
        "labels": dict(job.labels),
        "created_at": job.created_at.isoformat(),
    }
    return WebhookEvent(
        _event_id(job.id, "job.started", job.created_at.isoformat()),
        "job.started",
        job.id,
        job.created_at,
        data,
    )


def task_finished(job_id: str, task_id: str, url: str, at: datetime) -> WebhookEvent:
    """The event of a page that ended (its body is made from the task when delivered)."""
    data = {"task_id": task_id, "url": url}
    return WebhookEvent(
        _event_id(job_id, "task.finished", task_id), "task.finished", job_id, at, data
    )


def page_data(task: TaskRecord) -> dict[str, Any]:
    """The ``data`` of a page's Standard Webhooks event."""
    return {
        "job_id": task.job_id,
        "task_id": task.id,
        "url": task.url,
        "status": task.status.value,
        "http_status": task.http_status,
        "error": task.error,
        "finished_at": task.updated_at.isoformat(),
    }


def _event_id(job_id: str, kind: str, what: str) -> str:
    return "evt_" + hashlib.sha256(f"{job_id}|{kind}|{what}".encode()).hexdigest()[:32]
