"""WebhookLog on Firestore: ``jobs/{id}/webhook_deliveries/{event_id}``, written by the one
delivery that holds the event's message at a time, read with the job (deleted with it by TTL
and by a job's deletion)."""

from __future__ import annotations

from dataclasses import asdict
from datetime import datetime
from typing import Any

from google.cloud import firestore

from scrapejobs_shared.adapters.firestore.call_deadline import reports_outages
from scrapejobs_shared.adapters.firestore.collection_adapter import CollectionAdapter
from scrapejobs_shared.observability.store_ops import count
from scrapejobs_shared.ports.webhooks import WebhookDelivery


@reports_outages
class FirestoreWebhookLog(CollectionAdapter):
    collection = "jobs"

    def _ref(self, job_id: str, event_id: str) -> Any:
        return self._collection.document(job_id).collection("webhook_deliveries").document(event_id)

    async def get(self, job_id: str, event_id: str) -> WebhookDelivery | None:
        count(reads=1)
        snap = await self._ref(job_id, event_id).get(**self._deadline.call)
        return _delivery(snap.to_dict()) if snap.exists else None

    async def put(self, job_id: str, delivery: WebhookDelivery, expire_at: datetime) -> None:
        count(writes=1)
        await self._ref(job_id, delivery.event_id).set(
            asdict(delivery) | {"expire_at": expire_at}, **self._deadline.call
        )

    async def list(self, job_id: str, limit: int) -> list[WebhookDelivery]:
        query = (
            self._collection.document(job_id)
            .collection("webhook_deliveries")
            .order_by("created_at", direction=firestore.Query.DESCENDING)
            .limit(limit)
        )
        found = [_delivery(snap.to_dict()) async for snap in query.stream(**self._deadline.call)]
        count(reads=max(len(found), 1))
        return found


def _delivery(doc: dict[str, Any] | None) -> WebhookDelivery:
    doc = dict(doc or {})
    doc.pop("expire_at", None)
    return WebhookDelivery(**doc)
