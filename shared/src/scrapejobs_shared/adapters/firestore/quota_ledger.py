"""QuotaLedger on Firestore: ``quota_days/{tenant}~{YYYY-MM-DD}`` holds the day's ``reserved``
pages, ``quota_days/{..}/reservations/{key}`` each reservation's ``pages`` and ``released``;
both expire (TTL ``expire_at``) three days after the day. A reservation reads the day and its
reservations, then commits them guarded by the day's update time (a day changed meanwhile is
read again: store_base.guarded_rounds; as transactions, 12 reservations at once held each
other's locks on the emulator); a release is a transaction on the day's document. The
dispatcher sends a tenant's concurrent reservations in one (rules/daily_quota.py), so the day's
document takes about one write per commit's round trip per instance."""

from __future__ import annotations

from collections.abc import Sequence
from datetime import UTC, date, datetime, time, timedelta
from typing import Any

from google.cloud import firestore
from google.cloud.firestore_v1.base_query import FieldFilter

from scrapejobs_shared.adapters.firestore.call_deadline import reports_outages
from scrapejobs_shared.adapters.firestore.collection_adapter import CollectionAdapter
from scrapejobs_shared.adapters.firestore.store_base import (
    commit_guarded,
    guarded_rounds,
    in_transaction,
)
from scrapejobs_shared.observability.store_ops import count
from scrapejobs_shared.ports.quota_ledger import Reservation

COLLECTION = "quota_days"
RESERVATIONS = "reservations"
KEPT = timedelta(days=3)


@reports_outages
class FirestoreQuotaLedger(CollectionAdapter):
    collection = COLLECTION

    async def reserve(
        self, tenant: str, day: date, wanted: Sequence[Reservation], limit: int
    ) -> list[bool]:
        day_ref = self._collection.document(_day_id(tenant, day))
        refs = [day_ref.collection(RESERVATIONS).document(r.key) for r in wanted]
        expire_at = _expiry(day)

        async def attempt() -> list[bool]:
            count(reads=1 + len(refs))
            snaps = [s async for s in self._client.get_all([day_ref, *refs], **self._deadline.call)]
            by_path = {s.reference.path: s for s in snaps}
            day_snap = by_path[day_ref.path]  # get_all answers a missing one as not existing
            known = bool(day_snap.exists)
            reserved = int((day_snap.to_dict() or {}).get("reserved", 0)) if known else 0
            commit = self._client.batch()
            granted: list[bool] = []
            for reservation, ref in zip(wanted, refs, strict=True):
                held = by_path.get(ref.path)
                if held is not None and held.exists and _same(held.to_dict() or {}, reservation):
                    granted.append(True)  # the same reservation, retried
                elif reserved + reservation.pages <= limit:
                    reserved += reservation.pages
                    doc = {
                        "pages": reservation.pages,
                        "released": 0,
                        "settled": False,
                        "expire_at": expire_at,
                    }
                    commit.set(ref, doc)
                    count(writes=1)
                    granted.append(True)
                else:
                    granted.append(False)
            count(writes=1)
            day = {"tenant": tenant, "reserved": reserved, "expire_at": expire_at}
            if known:  # every change of the day's reservations writes it: the one guard
                guard = self._client.write_option(last_update_time=day_snap.update_time)
                commit.update(day_ref, day, option=guard)
            else:
                commit.create(day_ref, day)
            await commit_guarded(commit, self._deadline.call)  # Stale: read the day again
            return granted

        return await guarded_rounds(attempt)

    async def release(
        self, tenant: str, day: date, key: str, unused: int, final: bool = False
    ) -> None:
        day_ref = self._collection.document(_day_id(tenant, day))
        ref = day_ref.collection(RESERVATIONS).document(key)

        @firestore.async_transactional
        async def run(transaction: Any) -> None:
            count(reads=2)
            held = await ref.get(transaction=transaction, **self._deadline.call)
            day_snap = await day_ref.get(transaction=transaction, **self._deadline.call)
            if not held.exists or not day_snap.exists:
                return
            doc = held.to_dict() or {}
            pages, released = int(doc.get("pages", 0)), int(doc.get("released", 0))
            now = min(max(unused, released), pages)
            if now == released and (not final or doc.get("settled")):
                return
            count(writes=1)
            transaction.update(ref, {"released": now, "settled": bool(doc.get("settled")) or final})
            if now != released:
                reserved = int((day_snap.to_dict() or {}).get("reserved", 0))
                count(writes=1)
                transaction.update(day_ref, {"reserved": max(0, reserved - (now - released))})

        await in_transaction(self._client, run)

    async def unsettled(self, tenant: str, day: date, limit: int) -> list[str]:
        reservations = self._collection.document(_day_id(tenant, day)).collection(RESERVATIONS)
        query = reservations.where(filter=FieldFilter("settled", "==", False)).limit(limit)
        found = [snap.id async for snap in query.stream(**self._deadline.call)]
        count(reads=max(1, len(found)))
        return found

    async def reserved(self, tenant: str, day: date) -> int:
        count(reads=1)
        snap = await self._collection.document(_day_id(tenant, day)).get(**self._deadline.call)
        return int((snap.to_dict() or {}).get("reserved", 0)) if snap.exists else 0


def _same(held: dict[str, Any], wanted: Reservation) -> bool:
    """Whether the reservation held is ``wanted`` retried (not an id reused)."""
    return (
        int(held.get("pages", -1)) == wanted.pages
        and not held.get("released")
        and not held.get("settled")
    )


def _day_id(tenant: str, day: date) -> str:
    return f"{tenant}~{day.isoformat()}"


def _expiry(day: date) -> datetime:
    return datetime.combine(day, time(), UTC) + KEPT
