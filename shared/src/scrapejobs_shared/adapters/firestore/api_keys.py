"""ApiKeyStore on Firestore: ``api_keys/{digest}``, so checking a presented key is one document
read; ``id`` (public), ``tenant``, ``role``, ``name``, ``created_at``, ``last_used_at``. Listing
by tenant uses the composite index (tenant, created_at desc) Terraform declares."""

from __future__ import annotations

import contextlib
from datetime import datetime
from typing import Any

from google.api_core import exceptions as gexc
from google.cloud import firestore
from google.cloud.firestore_v1.base_query import FieldFilter

from scrapejobs_shared.adapters.firestore.call_deadline import reports_outages
from scrapejobs_shared.adapters.firestore.collection_adapter import CollectionAdapter
from scrapejobs_shared.domain.tenancy import Role
from scrapejobs_shared.observability.store_ops import count
from scrapejobs_shared.ports.api_keys import ApiKeyRecord

COLLECTION = "api_keys"


@reports_outages
class FirestoreApiKeyStore(CollectionAdapter):
    collection = COLLECTION

    async def add(self, record: ApiKeyRecord) -> None:
        count(writes=1)
        doc = {
            "id": record.id,
            "tenant": record.tenant,
            "role": record.role.value,
            "name": record.name,
            "created_at": record.created_at,
            "last_used_at": record.last_used_at,
        }
        await self._collection.document(record.digest).create(doc, **self._deadline.call)

    async def by_digest(self, digest: str) -> ApiKeyRecord | None:
        count(reads=1)
        snap = await self._collection.document(digest).get(**self._deadline.call)
        return _record(snap.id, snap.to_dict()) if snap.exists else None

    async def by_id(self, key_id: str) -> ApiKeyRecord | None:
        query = self._collection.where(filter=FieldFilter("id", "==", key_id)).limit(1)
        found = [_record(s.id, s.to_dict()) async for s in query.stream(**self._deadline.call)]
        count(reads=max(1, len(found)))
        return found[0] if found else None

    async def listed(self, tenant: str | None, limit: int) -> list[ApiKeyRecord]:
        query: Any = self._collection
        if tenant is not None:
            query = query.where(filter=FieldFilter("tenant", "==", tenant))
        query = query.order_by("created_at", direction=firestore.Query.DESCENDING).limit(limit)
        found = [_record(s.id, s.to_dict()) async for s in query.stream(**self._deadline.call)]
        count(reads=max(1, len(found)))
        return found

    async def remove(self, key_id: str) -> bool:
        found = await self.by_id(key_id)
        if found is None:
            return False
        count(writes=1)
        await self._collection.document(found.digest).delete(**self._deadline.call)
        return True

    async def used(self, digest: str, at: datetime) -> None:
        count(writes=1)
        with contextlib.suppress(gexc.NotFound):  # revoked in between: nothing to note
            await self._collection.document(digest).update(
                {"last_used_at": at}, **self._deadline.call
            )


def _record(digest: str, doc: dict[str, Any] | None) -> ApiKeyRecord:
    doc = doc or {}
    return ApiKeyRecord(
        id=str(doc.get("id", "")),
        digest=digest,
        tenant=str(doc.get("tenant", "")),
        role=Role(doc.get("role", Role.MEMBER.value)),
        name=str(doc.get("name", "")),
        created_at=doc["created_at"],
        last_used_at=doc.get("last_used_at"),
    )
