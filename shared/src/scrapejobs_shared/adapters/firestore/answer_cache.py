"""AnswerCache on Firestore: ``ai_answers/{key}``, one document an answer (the value as a JSON
string: an answer may hold what a Firestore map cannot), deleted by a TTL policy on
``expire_at``; reads check ``expire_at`` themselves (TTL deletes within about a day)."""

from __future__ import annotations

import json
from datetime import datetime
from typing import Any

from scrapejobs_shared.adapters.firestore.call_deadline import CallDeadline, reports_outages
from scrapejobs_shared.observability.store_ops import count
from scrapejobs_shared.ports.answer_cache import CachedAnswer

COLLECTION = "ai_answers"


@reports_outages
class FirestoreAnswerCache:
    def __init__(self, client: Any, deadline: CallDeadline | None = None) -> None:
        self._answers = client.collection(COLLECTION)
        self._deadline = deadline or CallDeadline()

    async def get(self, key: str, now: datetime) -> CachedAnswer | None:
        count(reads=1)
        snap = await self._answers.document(key).get(**self._deadline.call)
        if not snap.exists:
            return None
        doc = snap.to_dict() or {}
        if doc.get("expire_at") is None or doc["expire_at"] <= now:
            return None
        return CachedAnswer(json.loads(doc["value"]), str(doc.get("model") or ""))

    async def put(self, key: str, answer: CachedAnswer, expire_at: datetime) -> None:
        count(writes=1)
        doc = {"value": json.dumps(answer.value), "model": answer.model, "expire_at": expire_at}
        await self._answers.document(key).set(doc, **self._deadline.call)
