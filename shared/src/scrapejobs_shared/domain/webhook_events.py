"""Webhook events: what a job's end is announced as, with an id that is the same for every
delivery attempt of one event (Standard Webhooks' ``webhook-id``) and different for the next
completion of the same job (after a replay)."""

from __future__ import annotations

import hashlib
import json
from collections.abc import Mapping
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from scrapejobs_shared.domain.jobspec import WebhookEventType
from scrapejobs_shared.domain.records import JobRecord
from scrapejobs_shared.domain.statuses import JobStatus, TaskStatus


class MalformedEvent(ValueError):
    """A webhook message that is not an event this code wrote."""


@dataclass(frozen=True, slots=True)
class WebhookEvent:
    id: str
    type: WebhookEventType
    job_id: str
    occurred_at: datetime
    data: Mapping[str, Any]

    def body(self) -> str:
        """The JSON the receiver gets (and the signature covers)."""
        payload = {"type": self.type, "timestamp": self.occurred_at.isoformat(), "data": self.data}
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
    digest = hashlib.sha256(f"{job.id}|{kind}|{at.isoformat()}".encode()).hexdigest()
    return WebhookEvent(f"evt_{digest[:32]}", kind, job.id, at, data)
