"""In-memory webhook outbox and delivery log (unit tests)."""

from __future__ import annotations

from datetime import datetime

from scrapejobs_shared.domain.webhook_events import WebhookEvent
from scrapejobs_shared.ports.webhooks import WebhookDelivery


class MemoryWebhookOutbox:
    def __init__(self) -> None:
        self.events: list[WebhookEvent] = []

    async def publish(self, event: WebhookEvent) -> None:
        self.events.append(event)


class MemoryWebhookLog:
    def __init__(self) -> None:
        self.deliveries: dict[tuple[str, str], WebhookDelivery] = {}

    async def get(self, job_id: str, event_id: str) -> WebhookDelivery | None:
        return self.deliveries.get((job_id, event_id))

    async def put(self, job_id: str, delivery: WebhookDelivery, expire_at: datetime) -> None:
        self.deliveries[(job_id, delivery.event_id)] = delivery

    async def list(self, job_id: str, limit: int) -> list[WebhookDelivery]:
        mine = [d for (j, _), d in self.deliveries.items() if j == job_id]
        return sorted(mine, key=lambda d: d.created_at, reverse=True)[:limit]
