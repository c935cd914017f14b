"""MonitorStore on Firestore: ``monitors/{id}`` with ``tenant``, ``name``, ``status``, the
monitor's request as JSON (``request``), ``created_at``, ``updated_at``, ``next_check_at``
(null while paused), ``last_check_id``, ``last_check_at``, ``checks``. Listing uses the
composite index (tenant, created_at desc), ``due`` the index (status, next_check_at), both
declared in Terraform."""

from __future__ import annotations

from datetime import datetime
from typing import Any

from google.cloud import firestore
from google.cloud.firestore_v1.base_query import FieldFilter

from scrapejobs_shared.adapters.firestore.call_deadline import reports_outages
from scrapejobs_shared.adapters.firestore.collection_adapter import CollectionAdapter
from scrapejobs_shared.domain.monitors import MonitorRecord, MonitorRequest, MonitorStatus
from scrapejobs_shared.observability.store_ops import count

COLLECTION = "monitors"


@reports_outages
class FirestoreMonitorStore(CollectionAdapter):
    collection = COLLECTION

    async def create(self, record: MonitorRecord) -> None:
        count(writes=1)
        await self._collection.document(record.id).create(_doc(record), **self._deadline.call)

    async def get(self, tenant: str, monitor_id: str) -> MonitorRecord | None:
        if not monitor_id or "/" in monitor_id:
            return None
        count(reads=1)
        snap = await self._collection.document(monitor_id).get(**self._deadline.call)
        found = _record(snap.id, snap.to_dict()) if snap.exists else None
        return found if found is not None and found.tenant == tenant else None

    async def listed(
        self, tenant: str, limit: int, after: str | None = None
    ) -> tuple[list[MonitorRecord], str | None]:
        query = (
            self._collection.where(filter=FieldFilter("tenant", "==", tenant))
            .order_by("created_at", direction=firestore.Query.DESCENDING)
            .order_by("__name__", direction=firestore.Query.DESCENDING)
        )
        if after:
            last = await self.get(tenant, after)
            if last is not None:
                query = query.start_after({"created_at": last.created_at, "__name__": after})
        query = query.limit(limit + 1)
        found = [_record(s.id, s.to_dict()) async for s in query.stream(**self._deadline.call)]
        count(reads=max(1, len(found)))
        page = found[:limit]
        return page, page[-1].id if len(found) > limit and page else None

    async def count_of(self, tenant: str) -> int:
        query = self._collection.where(filter=FieldFilter("tenant", "==", tenant))
        result = await query.count().get(**self._deadline.call)
        count(reads=1)
        return int(result[0][0].value)

    async def save(self, record: MonitorRecord, read_at: datetime) -> bool:
        ref = self._collection.document(record.id)

        @firestore.async_transactional
        async def run(transaction: Any) -> bool:
            count(reads=1)
            snap = await ref.get(transaction=transaction, **self._deadline.call)
            doc = snap.to_dict() if snap.exists else None
            if doc is None or doc.get("tenant") != record.tenant:
                return False
            if doc.get("updated_at") != read_at:
                return False
            count(writes=1)
            transaction.set(ref, _doc(record))
            return True

        saved: bool = await run(self._client.transaction())
        return saved

    async def delete(self, tenant: str, monitor_id: str) -> bool:
        if await self.get(tenant, monitor_id) is None:
            return False
        # the monitor and everything under it: its checks, their pages, its snapshots
        deleted = await self._client.recursive_delete(self._collection.document(monitor_id))
        count(writes=max(1, deleted))
        return True

    async def due(self, now: datetime, limit: int) -> list[MonitorRecord]:
        query = (
            self._collection.where(filter=FieldFilter("status", "==", MonitorStatus.ACTIVE.value))
            .where(filter=FieldFilter("next_check_at", "<=", now))
            .order_by("next_check_at")
            .limit(limit)
        )
        found = [_record(s.id, s.to_dict()) async for s in query.stream(**self._deadline.call)]
        count(reads=max(1, len(found)))
        return found


def _doc(record: MonitorRecord) -> dict[str, Any]:
    return {
        "tenant": record.tenant,
        "name": record.name,
        "status": record.status.value,
        "request": record.request.model_dump_json(),
        "created_at": record.created_at,
        "updated_at": record.updated_at,
        "next_check_at": record.next_check_at,
        "last_check_id": record.last_check_id,
        "last_check_at": record.last_check_at,
        "checks": record.checks,
    }


def _record(monitor_id: str, doc: dict[str, Any] | None) -> MonitorRecord:
    doc = doc or {}
    return MonitorRecord(
        id=monitor_id,
        tenant=str(doc.get("tenant", "")),
        request=MonitorRequest.model_validate_json(doc["request"], strict=False),
        created_at=doc["created_at"],
        updated_at=doc["updated_at"],
        next_check_at=doc.get("next_check_at"),
        last_check_id=doc.get("last_check_id"),
        last_check_at=doc.get("last_check_at"),
        checks=int(doc.get("checks") or 0),
    )
