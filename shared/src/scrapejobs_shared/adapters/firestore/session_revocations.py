"""SessionRevocations on Firestore: ``revoked_sessions/{session id}``, one small document a
signed-out session, deleted by a TTL policy on ``expire_at`` (the session's own expiry); reads
check ``expire_at`` themselves (TTL deletes within about a day)."""

from __future__ import annotations

from datetime import datetime

from scrapejobs_shared.adapters.firestore.call_deadline import reports_outages
from scrapejobs_shared.adapters.firestore.collection_adapter import CollectionAdapter
from scrapejobs_shared.observability.store_ops import count

COLLECTION = "revoked_sessions"


@reports_outages
class FirestoreSessionRevocations(CollectionAdapter):
    collection = COLLECTION

    async def revoke(self, session_id: str, until: datetime) -> None:
        count(writes=1)
        await self._collection.document(session_id).set({"expire_at": until}, **self._deadline.call)

    async def revoked(self, session_id: str, now: datetime) -> bool:
        count(reads=1)
        snap = await self._collection.document(session_id).get(**self._deadline.call)
        doc = snap.to_dict() if snap.exists else None
        return bool(doc and doc.get("expire_at") is not None and doc["expire_at"] > now)
