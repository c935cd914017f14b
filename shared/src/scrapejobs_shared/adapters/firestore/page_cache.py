"""PageCache on Firestore: ``page_cache/{key}``, one small document an entry (the task it names
and when its page was fetched), staged by the job store in the commit of the results they name
(``stage_kept``), deleted by a TTL policy on ``expire_at``."""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime
from typing import Any

from scrapejobs_shared.adapters.firestore.call_deadline import CallDeadline, reports_outages
from scrapejobs_shared.domain.records import TaskRecord
from scrapejobs_shared.observability.store_ops import count
from scrapejobs_shared.ports.page_cache import KeptPage, kept_page

COLLECTION = "page_cache"


@reports_outages
class FirestorePageCache:
    def __init__(self, client: Any, deadline: CallDeadline | None = None) -> None:
        self._client = client
        self._pages = client.collection(COLLECTION)
        self._deadline = deadline or CallDeadline()

    async def get_many(self, keys: Sequence[str], fetched_after: datetime) -> dict[str, KeptPage]:
        if not keys:
            return {}
        refs = [self._pages.document(key) for key in dict.fromkeys(keys)]
        count(reads=len(refs))
        kept: dict[str, KeptPage] = {}
        async for snap in self._client.get_all(refs, **self._deadline.call):
            doc = snap.to_dict() if snap.exists else None
            if doc and doc.get("fetched_at") is not None and doc["fetched_at"] > fetched_after:
                kept[snap.id] = KeptPage(str(doc["job_id"]), str(doc["task_id"]), doc["fetched_at"])
        return kept


def stage_kept(
    target: Any, client: Any, kept: Sequence[tuple[str, TaskRecord]], now: datetime
) -> int:
    """Stage the page cache entries of ``kept`` results in ``target`` (a batch or a
    transaction: the results' own commit); how many."""
    pages = client.collection(COLLECTION)
    for key, record in kept:
        page, expire_at = kept_page(record, now)
        doc = {
            "job_id": page.job_id,
            "task_id": page.task_id,
            "fetched_at": page.fetched_at,
            "expire_at": expire_at,
        }
        target.set(pages.document(key), doc)
    return len(kept)
