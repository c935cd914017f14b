"""TenantQuotas on Firestore: ``tenants/{tenant}`` with ``pages_per_day``, ``pages_in_flight``."""

from __future__ import annotations

from typing import Any

from scrapejobs_shared.adapters.firestore.call_deadline import reports_outages
from scrapejobs_shared.adapters.firestore.collection_adapter import CollectionAdapter
from scrapejobs_shared.observability.store_ops import count
from scrapejobs_shared.ports.tenant_quotas import Quota

COLLECTION = "tenants"


@reports_outages
class FirestoreTenantQuotas(CollectionAdapter):
    collection = COLLECTION

    async def quota_of(self, tenant: str) -> Quota | None:
        count(reads=1)
        snap = await self._collection.document(tenant).get(**self._deadline.call)
        return _quota(snap.to_dict()) if snap.exists else None

    async def set_quota(self, tenant: str, quota: Quota) -> None:
        count(writes=1)
        doc = {"pages_per_day": quota.pages_per_day, "pages_in_flight": quota.pages_in_flight}
        await self._collection.document(tenant).set(doc, **self._deadline.call)

    async def quotas(self, limit: int) -> list[tuple[str, Quota]]:
        query = self._collection.order_by("__name__").limit(limit)
        found = [(s.id, _quota(s.to_dict())) async for s in query.stream(**self._deadline.call)]
        count(reads=max(1, len(found)))
        return found


def _quota(doc: dict[str, Any] | None) -> Quota:
    doc = doc or {}
    return Quota(int(doc.get("pages_per_day") or 0), int(doc.get("pages_in_flight") or 0))
