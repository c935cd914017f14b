"""MonitorStore on Firestore: ``monitors/{id}`` with ``tenant``, ``name``, ``status``, the
monitor's request as JSON (``request``), ``created_at``, ``updated_at``, ``next_check_at``
(null while paused), ``last_check_id``, ``last_check_at``, ``checks``. Listing uses the
composite index (tenant, created_at desc), ``due`` the indexes (status, next_check_at) and
(tenant, status, next_check_at), declared in Terraform.

``monitor_tenants/{tenant}`` counts a tenant's monitors (``monitors``): a create reads it,
then creates the monitor and counts it in one commit guarded by the count's update time (a
count changed meanwhile is read again: store_base.guarded_rounds), so parallel creates past
the cap fail however many instances take them; a delete removes the monitor and counts it off
in one transaction. A tenant whose count was never kept (its monitors made before it was) is
counted once by an aggregation first."""

from __future__ import annotations

from datetime import datetime
from typing import Any

from google.api_core import exceptions as gexc
from google.cloud import firestore
from google.cloud.firestore_v1.base_query import FieldFilter

from scrapejobs_shared.adapters.firestore.call_deadline import reports_outages
from scrapejobs_shared.adapters.firestore.collection_adapter import CollectionAdapter
from scrapejobs_shared.adapters.firestore.store_base import (
    Stale,
    commit_guarded,
    guarded_rounds,
    in_transaction,
)
from scrapejobs_shared.domain.monitors import MonitorRecord, MonitorRequest, MonitorStatus
from scrapejobs_shared.observability.store_ops import count

COLLECTION = "monitors"
TENANTS = "monitor_tenants"


@reports_outages
class FirestoreMonitorStore(CollectionAdapter):
    collection = COLLECTION

    async def create(self, record: MonitorRecord, limit: int) -> bool:
        tally = self._tally(record.tenant)
        ref = self._collection.document(record.id)

        async def attempt() -> bool:
            count(reads=1)
            snap = await tally.get(**self._deadline.call)
            if snap.exists:
                kept = int((snap.to_dict() or {}).get("monitors", 0))
            else:  # counted once (a creator that raced it finds the count when it retries)
                kept = await self.count_of(record.tenant)
            if kept >= limit:
                return False
            count(writes=2)
            commit = self._client.batch()
            commit.create(ref, _doc(record))
            counted = {"tenant": record.tenant, "monitors": kept + 1}
            if snap.exists:
                guard = self._client.write_option(last_update_time=snap.update_time)
                commit.update(tally, counted, option=guard)
            else:
                commit.create(tally, counted)
            try:
                await commit_guarded(commit, self._deadline.call)  # counted meanwhile: Stale
            except Stale as stale:
                if snap.exists and isinstance(stale.__cause__, gexc.AlreadyExists):
                    raise stale.__cause__ from None  # the monitor's own id
                raise
            return True

        made: bool = await guarded_rounds(attempt)
        return made

    def _tally(self, tenant: str) -> Any:
        return self._client.collection(TENANTS).document(tenant)

    async def tenants(self, limit: int) -> list[str]:
        query = (
            self._client.collection(TENANTS)
            .where(filter=FieldFilter("monitors", ">", 0))
            .order_by("monitors")
            .limit(limit)
        )
        found = sorted([s.id async for s in query.stream(**self._deadline.call)])
        count(reads=max(1, len(found)))
        return found

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
        ref, tally = self._collection.document(monitor_id), self._tally(tenant)

        @firestore.async_transactional
        async def run(transaction: Any) -> bool:
            count(reads=2)
            snap = await ref.get(transaction=transaction, **self._deadline.call)
            kept = await tally.get(transaction=transaction, **self._deadline.call)
            if not snap.exists:
                return False
            count(writes=1)
            transaction.delete(ref)
            if kept.exists:
                count(writes=1)
                left = max(0, int((kept.to_dict() or {}).get("monitors", 0)) - 1)
                transaction.update(tally, {"monitors": left})
            return True

        if not await in_transaction(self._client, run):
            return False  # deleted meanwhile
        # everything under it: its checks, their pages, its snapshots
        deleted = await self._client.recursive_delete(ref)
        count(writes=max(1, deleted))
        return True

    async def due(
        self, now: datetime, limit: int, tenant: str | None = None
    ) -> list[MonitorRecord]:
        query = self._collection.where(
            filter=FieldFilter("status", "==", MonitorStatus.ACTIVE.value)
        )
        if tenant is not None:
            query = query.where(filter=FieldFilter("tenant", "==", tenant))
        query = (
            query.where(filter=FieldFilter("next_check_at", "<=", now))
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
