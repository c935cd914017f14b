"""``workers/{worker_id}``: one document per worker process, written at most about once a
second by that process alone (its reports are spaced by the worker), inside its batch commits
when it has one to make. The counts are increments, so a report adds what the process
finished since its previous one; ``expire_at`` lets Firestore's TTL drop processes long gone."""

from __future__ import annotations

from datetime import datetime
from typing import Any

from google.cloud import firestore
from google.cloud.firestore_v1.base_query import FieldFilter

from scrapejobs_shared.adapters.firestore.call_deadline import CallDeadline, reports_outages
from scrapejobs_shared.domain.workers import KEPT_FOR, ProxyUse, WorkerBeat, WorkerView
from scrapejobs_shared.observability.store_ops import count

COLLECTION = "workers"


def stage_beat(commit: Any, client: Any, beat: WorkerBeat) -> None:
    """Add the report to a commit being built (a write batch)."""
    fields = {
        "revision": beat.revision,
        "started_at": beat.started_at,
        "last_seen": beat.seen_at,
        "batches": firestore.Increment(beat.batches),
        "pages": firestore.Increment(beat.pages),
        "batches_in_flight": beat.batches_in_flight,
        "pages_in_flight": beat.pages_in_flight,
        "expire_at": beat.seen_at + KEPT_FOR,
    }
    if beat.proxies:  # totals since the process started: written as they are
        fields["proxies"] = [
            {"label": use.label, "served": use.served, "failed": use.failed} for use in beat.proxies
        ]
    commit.set(client.collection(COLLECTION).document(beat.worker_id), fields, merge=True)


@reports_outages
class FirestoreWorkerDirectory:
    def __init__(self, client: Any, deadline: CallDeadline | None = None) -> None:
        self._client = client
        self._deadline = deadline or CallDeadline()

    async def report(self, beat: WorkerBeat) -> None:
        commit = self._client.batch()
        stage_beat(commit, self._client, beat)
        count(writes=1)
        await commit.commit(**self._deadline.call)

    async def seen_since(self, since: datetime, limit: int) -> list[WorkerView]:
        query = (
            self._client.collection(COLLECTION)
            .where(filter=FieldFilter("last_seen", ">", since))
            .order_by("last_seen", direction=firestore.Query.DESCENDING)
            .limit(limit)
        )
        found = [_view(snap) async for snap in query.stream(**self._deadline.call)]
        count(reads=max(len(found), 1))
        return found


def _view(snap: Any) -> WorkerView:
    doc = snap.to_dict() or {}
    return WorkerView(
        worker_id=snap.id,
        revision=str(doc.get("revision", "")),
        started_at=doc["started_at"],
        last_seen=doc["last_seen"],
        batches=int(doc.get("batches") or 0),
        pages=int(doc.get("pages") or 0),
        batches_in_flight=int(doc.get("batches_in_flight") or 0),
        pages_in_flight=int(doc.get("pages_in_flight") or 0),
        proxies=tuple(
            ProxyUse(str(use["label"]), int(use.get("served") or 0), int(use.get("failed") or 0))
            for use in doc.get("proxies") or []
        ),
    )
