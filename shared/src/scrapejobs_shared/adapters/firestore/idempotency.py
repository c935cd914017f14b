"""Idempotency keys on Firestore: ``idempotency_keys/{key}`` (the key is a digest: callers pass
one). Reserving is a ``create`` (exactly one concurrent request wins); the losers read the
document to tell a running submission from a finished one or another body."""

from __future__ import annotations

from datetime import datetime, timedelta
from typing import Any

from google.api_core import exceptions as gexc
from google.cloud import firestore

from scrapejobs_shared.adapters.firestore.call_deadline import reports_outages
from scrapejobs_shared.adapters.firestore.collection_adapter import CollectionAdapter
from scrapejobs_shared.observability.store_ops import count
from scrapejobs_shared.ports.idempotency import (
    Done,
    InFlight,
    Mismatch,
    Reservation,
    Reserved,
)

TAKE_OVER_RETRIES = 3


@reports_outages
class FirestoreIdempotencyKeys(CollectionAdapter):
    collection = "idempotency_keys"

    async def reserve(
        self, key: str, fingerprint: str, now: datetime, expire_at: datetime, stale_after: timedelta
    ) -> Reservation:
        ref = self._collection.document(key)
        doc = {
            "fingerprint": fingerprint,
            "job_id": None,
            "reserved_at": now,
            "expire_at": expire_at,
        }
        for _ in range(TAKE_OVER_RETRIES):
            count(writes=1)
            try:
                await ref.create(doc, **self._deadline.call)
                return Reserved()
            except gexc.AlreadyExists:
                pass
            count(reads=1)
            snap = await ref.get(**self._deadline.call)
            if not snap.exists:
                continue  # released in between: try again
            found: dict[str, Any] = snap.to_dict() or {}
            guard = self._client.write_option(last_update_time=snap.update_time)
            expired = found.get("expire_at") is not None and found["expire_at"] <= now
            if expired:  # kept past its time until TTL deletes it: the key is free again
                count(writes=1)
                try:
                    fresh = doc | {"completed_at": firestore.DELETE_FIELD}
                    await ref.update(fresh, option=guard, **self._deadline.call)
                    return Reserved()
                except (gexc.FailedPrecondition, gexc.NotFound):
                    continue
            if found.get("fingerprint") != fingerprint:
                return Mismatch()
            if found.get("job_id"):
                return Done(str(found["job_id"]))
            reserved_at = found.get("reserved_at")
            if reserved_at is not None and reserved_at > now - stale_after:
                return InFlight()
            count(writes=1)
            try:  # a dispatcher died mid-submission: take its reservation over
                await ref.update(
                    {"reserved_at": now, "expire_at": expire_at},
                    option=guard,
                    **self._deadline.call,
                )
                return Reserved()
            except (gexc.FailedPrecondition, gexc.NotFound):
                continue
        return InFlight()

    async def complete(self, key: str, job_id: str, now: datetime) -> None:
        count(writes=1)
        await self._collection.document(key).update(
            {"job_id": job_id, "completed_at": now}, **self._deadline.call
        )

    async def release(self, key: str) -> None:
        count(writes=1)
        await self._collection.document(key).delete(**self._deadline.call)
