"""TenantProxies on Firestore: ``tenant_proxies/{tenant}`` with ``proxies``, the pool's entries
(credentials included: the collection is read by the services alone, never listed in an
answer)."""

from __future__ import annotations

from scrapejobs_shared.adapters.firestore.call_deadline import reports_outages
from scrapejobs_shared.adapters.firestore.collection_adapter import CollectionAdapter
from scrapejobs_shared.observability.store_ops import count
from scrapejobs_shared.options.proxy_pools import ProxyPool, pool_of_entries

COLLECTION = "tenant_proxies"


@reports_outages
class FirestoreTenantProxies(CollectionAdapter):
    collection = COLLECTION

    async def pool_of(self, tenant: str) -> ProxyPool | None:
        count(reads=1)
        snap = await self._collection.document(tenant).get(**self._deadline.call)
        if not snap.exists:
            return None
        entries = (snap.to_dict() or {}).get("proxies") or []
        return pool_of_entries(entries, f"{COLLECTION}/{tenant}", owner=tenant)

    async def set_pool(self, tenant: str, pool: ProxyPool) -> None:
        count(writes=1)
        doc = {"proxies": [server.entry() for server in pool.servers]}
        await self._collection.document(tenant).set(doc, **self._deadline.call)

    async def remove_pool(self, tenant: str) -> bool:
        count(reads=1, writes=1)
        ref = self._collection.document(tenant)
        if not (await ref.get(**self._deadline.call)).exists:
            return False
        await ref.delete(**self._deadline.call)
        return True

    async def pools(self, limit: int) -> list[tuple[str, ProxyPool]]:
        query = self._collection.order_by("__name__").limit(limit)
        found = [
            (s.id, pool_of_entries((s.to_dict() or {}).get("proxies") or [], s.id, owner=s.id))
            async for s in query.stream(**self._deadline.call)
        ]
        count(reads=max(1, len(found)))
        return found
