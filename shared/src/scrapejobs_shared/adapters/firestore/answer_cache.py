"""AnswerCache on Firestore: ``ai_answers/{key}``, one document an answer (the value as a JSON
string: an answer may hold what a Firestore map cannot), deleted by a TTL policy on
``expire_at``; reads check ``expire_at`` themselves (TTL deletes within about a day)."""

from __future__ import annotations

import json
from collections.abc import Sequence
from datetime import datetime

from scrapejobs_shared.adapters.firestore.call_deadline import reports_outages
from scrapejobs_shared.adapters.firestore.collection_adapter import CollectionAdapter
from scrapejobs_shared.observability.store_ops import count
from scrapejobs_shared.ports.answer_cache import CachedAnswer

COLLECTION = "ai_answers"


@reports_outages
class FirestoreAnswerCache(CollectionAdapter):
    collection = COLLECTION

    async def get_many(self, keys: Sequence[str], now: datetime) -> dict[str, CachedAnswer]:
        if not keys:
            return {}
        refs = [self._collection.document(key) for key in dict.fromkeys(keys)]
        count(reads=len(refs))
        kept: dict[str, CachedAnswer] = {}
        async for snap in self._client.get_all(refs, **self._deadline.call):
            doc = snap.to_dict() if snap.exists else None
            if doc and doc.get("expire_at") is not None and doc["expire_at"] > now:
                kept[snap.id] = CachedAnswer(json.loads(doc["value"]), str(doc.get("model") or ""))
        return kept

    async def put(self, key: str, answer: CachedAnswer, expire_at: datetime) -> None:
        count(writes=1)
        doc = {"value": json.dumps(answer.value), "model": answer.model, "expire_at": expire_at}
        await self._collection.document(key).set(doc, **self._deadline.call)
