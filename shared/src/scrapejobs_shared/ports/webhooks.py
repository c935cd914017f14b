"""Webhook ports: the outbox events are published to (a Pub/Sub topic with retry and
dead-letter policies in production), and the log of each event's deliveries, shown on the job."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from typing import Literal, Protocol

from scrapejobs_shared.domain.webhook_events import WebhookEvent

DeliveryState = Literal["pending", "delivered", "failed"]


@dataclass(frozen=True, slots=True)
class WebhookDelivery:
    event_id: str
    type: str
    url: str
    state: DeliveryState
    attempts: int
    created_at: datetime
    updated_at: datetime
    last_status: int | None = None  # the receiver's last HTTP status
    last_error: str | None = None
    delivered_at: datetime | None = None


class WebhookOutbox(Protocol):
    async def publish(self, event: WebhookEvent) -> None:
        """Queue the event for delivery (raises if it could not be queued)."""


class WebhookLog(Protocol):
    async def get(self, job_id: str, event_id: str) -> WebhookDelivery | None: ...

    async def put(self, job_id: str, delivery: WebhookDelivery, expire_at: datetime) -> None: ...

    async def list(self, job_id: str, limit: int) -> list[WebhookDelivery]:
        """The job's deliveries, newest first."""
