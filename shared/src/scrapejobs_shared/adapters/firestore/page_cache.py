"""PageCache on Firestore: ``page_cache/{key}``, one small document an entry, staged by the job
store in the commit of the results they name (``stage_kept``), deleted by a TTL policy on
``expire_at``. Nothing queries an entry's fields (it is read by its key), so what it names (the
task and when its page was fetched) is one string, ``p``: one field for the store to index
instead of three (Terraform exempts it from indexing in production)."""

from __future__ import annotations

import json
from collections.abc import Sequence
from datetime import datetime
from typing import Any

from scrapejobs_shared.adapters.firestore.call_deadline import reports_outages
from scrapejobs_shared.adapters.firestore.collection_adapter import CollectionAdapter
from scrapejobs_shared.domain.records import TaskRecord
from scrapejobs_shared.observability.store_ops import count
from scrapejobs_shared.ports.page_cache import KeptPage, kept_page

COLLECTION = "page_cache"


@reports_outages
class FirestorePageCache(CollectionAdapter):
    collection = COLLECTION

    async def get_many(self, keys: Sequence[str], fetched_after: datetime) -> dict[str, KeptPage]:
        if not keys:
            return {}
        refs = [self._collection.document(key) for key in dict.fromkeys(keys)]
        count(reads=len(refs))
        kept: dict[str, KeptPage] = {}
        async for snap in self._client.get_all(refs, **self._deadline.call):
            page = _page_of(snap.to_dict()) if snap.exists else None
            if page is not None and page.fetched_at > fetched_after:
                kept[snap.id] = page
        return kept


def stage_kept(
    target: Any, client: Any, kept: Sequence[tuple[str, TaskRecord]], now: datetime
) -> int:
    """Stage the page cache entries of ``kept`` results in ``target`` (a batch or a
    transaction: the results' own commit); how many."""
    pages = client.collection(COLLECTION)
    for key, record in kept:
        page, expire_at = kept_page(record, now)
        named = json.dumps([page.job_id, page.task_id, page.fetched_at.isoformat()])
        target.set(pages.document(key), {"p": named, "expire_at": expire_at})
    return len(kept)


def _page_of(doc: dict[str, Any] | None) -> KeptPage | None:
    """The entry a document holds; None for one this version cannot read (a miss)."""
    if doc is None:
        return None
    try:
        job_id, task_id, fetched_at = json.loads(doc["p"])
        return KeptPage(str(job_id), str(task_id), datetime.fromisoformat(fetched_at))
    except (KeyError, TypeError, ValueError):
        return None
