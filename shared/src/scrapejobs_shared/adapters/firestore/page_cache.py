"""PageCache on Firestore: ``page_cache/{key}``, one document a page (its data as a JSON
string: a result may hold what a Firestore map cannot), written a batch at a time in one
commit, deleted by a TTL policy on ``expire_at``. A page whose document would pass Firestore's
1 MiB limit is not kept."""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from datetime import datetime
from typing import Any

from scrapejobs_shared.adapters.firestore.call_deadline import CallDeadline, reports_outages
from scrapejobs_shared.observability.store_ops import count
from scrapejobs_shared.ports.page_cache import MAX_DATA_CHARS, CachedPage

COLLECTION = "page_cache"
MAX_COMMIT = 500  # documents in one commit
MAX_COMMIT_CHARS = 3_500_000  # and their data, under a gRPC message's 4 MiB (the emulator's limit)


@reports_outages
class FirestorePageCache:
    def __init__(self, client: Any, deadline: CallDeadline | None = None) -> None:
        self._client = client
        self._pages = client.collection(COLLECTION)
        self._deadline = deadline or CallDeadline()

    async def get_many(self, keys: Sequence[str], fetched_after: datetime) -> dict[str, CachedPage]:
        if not keys:
            return {}
        refs = [self._pages.document(key) for key in dict.fromkeys(keys)]
        count(reads=len(refs))
        kept: dict[str, CachedPage] = {}
        async for snap in self._client.get_all(refs, **self._deadline.call):
            doc = snap.to_dict() if snap.exists else None
            if doc and doc.get("fetched_at") is not None and doc["fetched_at"] > fetched_after:
                kept[snap.id] = CachedPage(
                    http_status=doc.get("http_status"),
                    data=json.loads(doc["data"]),
                    fetched_at=doc["fetched_at"],
                    truncated_fields=tuple(doc.get("truncated_fields") or ()),
                    field_errors=doc.get("field_errors"),
                )
        return kept

    async def put_many(self, pages: Mapping[str, CachedPage], expire_at: datetime) -> None:
        docs = {}
        for key, page in pages.items():
            data = json.dumps(page.data, separators=(",", ":"))
            if len(data) <= MAX_DATA_CHARS:
                docs[key] = {
                    "http_status": page.http_status,
                    "data": data,
                    "fetched_at": page.fetched_at,
                    "truncated_fields": list(page.truncated_fields),
                    "field_errors": page.field_errors,
                    "expire_at": expire_at,
                }
        for chunk in _commits(docs):
            batch = self._client.batch()
            for key in chunk:
                batch.set(self._pages.document(key), docs[key])
            count(writes=len(chunk))
            await batch.commit(**self._deadline.call)


def _commits(docs: dict[str, dict[str, Any]]) -> list[list[str]]:
    """The keys of ``docs`` in commits of at most MAX_COMMIT documents and MAX_COMMIT_CHARS."""
    chunks: list[list[str]] = []
    size = MAX_COMMIT_CHARS + 1
    for key, doc in docs.items():
        if size + len(doc["data"]) > MAX_COMMIT_CHARS or len(chunks[-1]) >= MAX_COMMIT:
            chunks.append([])
            size = 0
        chunks[-1].append(key)
        size += len(doc["data"])
    return chunks
