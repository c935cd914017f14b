"""MonitorChecks on Firestore, under each monitor's document:

* ``monitors/{id}/checks/{check_id}``: ``tenant``, ``trigger``, ``status``, ``job_id``,
  ``created_at``, ``finished_at``, ``summary``, ``lease_until`` (who compares it), and
  ``expire_at`` (the monitor's retention: Firestore's TTL deletes it);
* ``.../checks/{check_id}/check_pages/{page_key}``: ``url``, ``status``, ``status_code``,
  ``diff`` (JSON), ``notify``, ``held_back_by``, ``error``, ``expire_at``;
* ``monitors/{id}/snapshots/{page_key}``: ``url``, ``written_by``, ``current`` and ``before``
  (JSON of what a check found: its data and markdown, the markdown cut at
  ``MAX_MARKDOWN`` characters), kept while the monitor is.

A check's pages and snapshots are written in commits of ``COMMIT_SIZE`` documents, the
check's final status last."""

from __future__ import annotations

import contextlib
import json
from collections.abc import Sequence
from dataclasses import asdict
from datetime import datetime
from typing import Any

from google.api_core import exceptions as gexc
from google.cloud import firestore
from google.cloud.firestore_v1.base_query import FieldFilter

from scrapejobs_shared.adapters.firestore.call_deadline import CallDeadline, reports_outages
from scrapejobs_shared.adapters.firestore.monitor_store import COLLECTION
from scrapejobs_shared.domain.monitor_checks import (
    CheckPage,
    CheckRecord,
    CheckStatus,
    PageSnapshot,
    PageStatus,
    Seen,
)
from scrapejobs_shared.observability.store_ops import count

CHECKS, CHECK_PAGES, SNAPSHOTS = "checks", "check_pages", "snapshots"
COMMIT_SIZE = 200
MAX_MARKDOWN = 300_000  # characters of a page's markdown a snapshot keeps (a document < 1 MiB)


@reports_outages
class FirestoreMonitorChecks:
    def __init__(self, client: firestore.AsyncClient, deadline: CallDeadline | None = None) -> None:
        self._client = client
        self._monitors = client.collection(COLLECTION)
        self._deadline = deadline or CallDeadline()

    def _check_ref(self, monitor_id: str, check_id: str) -> Any:
        return self._monitors.document(monitor_id).collection(CHECKS).document(check_id)

    async def add(self, check: CheckRecord) -> bool:
        count(writes=1)
        doc = _check_doc(check)
        try:
            await self._check_ref(check.monitor_id, check.id).create(doc, **self._deadline.call)
        except gexc.AlreadyExists:
            return False
        return True

    async def get(self, monitor_id: str, check_id: str) -> CheckRecord | None:
        if "/" in monitor_id or "/" in check_id or not check_id:
            return None
        count(reads=1)
        snap = await self._check_ref(monitor_id, check_id).get(**self._deadline.call)
        return _check(monitor_id, snap.id, snap.to_dict()) if snap.exists else None

    async def listed(
        self, monitor_id: str, limit: int, after: str | None = None
    ) -> tuple[list[CheckRecord], str | None]:
        query = (
            self._monitors.document(monitor_id)
            .collection(CHECKS)
            .order_by("created_at", direction=firestore.Query.DESCENDING)
            .order_by("__name__", direction=firestore.Query.DESCENDING)
        )
        if after:
            last = await self.get(monitor_id, after)
            if last is not None:
                query = query.start_after({"created_at": last.created_at, "__name__": after})
        found = [
            _check(monitor_id, s.id, s.to_dict())
            async for s in query.limit(limit + 1).stream(**self._deadline.call)
        ]
        count(reads=max(1, len(found)))
        page = found[:limit]
        return page, page[-1].id if len(found) > limit and page else None

    async def mark(self, monitor_id: str, check_id: str, status: CheckStatus) -> None:
        ref = self._check_ref(monitor_id, check_id)
        count(reads=1)
        snap = await ref.get(**self._deadline.call)
        if not snap.exists or CheckStatus(snap.get("status")) is status:
            return
        if _check(monitor_id, snap.id, snap.to_dict()).finished:
            return
        count(writes=1)
        guard = self._client.write_option(last_update_time=snap.update_time)
        # changed meanwhile (claimed or finished): its own writer decides
        with contextlib.suppress(gexc.FailedPrecondition):
            await ref.update({"status": status.value}, option=guard, **self._deadline.call)

    async def claim(
        self, monitor_id: str, check_id: str, now: datetime, until: datetime
    ) -> CheckRecord | None:
        ref = self._check_ref(monitor_id, check_id)
        count(reads=1)
        snap = await ref.get(**self._deadline.call)
        if not snap.exists:
            return None
        doc = snap.to_dict() or {}
        check = _check(monitor_id, snap.id, doc)
        lease = doc.get("lease_until")
        if check.finished or (lease is not None and lease > now):
            return None
        count(writes=1)
        guard = self._client.write_option(last_update_time=snap.update_time)
        try:
            await ref.update({"lease_until": until}, option=guard, **self._deadline.call)
        except gexc.FailedPrecondition:
            return None  # another caller claimed it first
        return check

    async def snapshots(self, monitor_id: str) -> list[PageSnapshot]:
        query = self._monitors.document(monitor_id).collection(SNAPSHOTS)
        found = [_snapshot(s.to_dict()) async for s in query.stream(**self._deadline.call)]
        count(reads=max(1, len(found)))
        return found

    async def finish(
        self, check: CheckRecord, pages: Sequence[CheckPage], snapshots: Sequence[PageSnapshot]
    ) -> None:
        monitor = self._monitors.document(check.monitor_id)
        check_ref = self._check_ref(check.monitor_id, check.id)
        expire_at = check.expire_at
        writes: list[tuple[Any, dict[str, Any]]] = [
            (check_ref.collection(CHECK_PAGES).document(p.key), _page_doc(p, expire_at))
            for p in pages
        ]
        writes += [
            (monitor.collection(SNAPSHOTS).document(s.key), _snapshot_doc(s)) for s in snapshots
        ]
        for start in range(0, len(writes), COMMIT_SIZE):
            commit = self._client.batch()
            for ref, doc in writes[start : start + COMMIT_SIZE]:
                commit.set(ref, doc)
            count(writes=len(writes[start : start + COMMIT_SIZE]))
            await commit.commit(**self._deadline.call)
        count(writes=1)
        final = _check_doc(check) | {"lease_until": None}
        await check_ref.set(final, **self._deadline.call)

    async def pages(
        self,
        monitor_id: str,
        check_id: str,
        status: PageStatus | None,
        limit: int,
        after: str | None = None,
    ) -> tuple[list[CheckPage], str | None]:
        collection = self._check_ref(monitor_id, check_id).collection(CHECK_PAGES)
        query: Any = collection
        if status is not None:
            query = query.where(filter=FieldFilter("status", "==", status.value))
        query = query.order_by("__name__")
        if after:
            query = query.start_after({"__name__": collection.document(after)})
        found = [
            _page(s.to_dict()) async for s in query.limit(limit + 1).stream(**self._deadline.call)
        ]
        count(reads=max(1, len(found)))
        page = found[:limit]
        return page, page[-1].key if len(found) > limit and page else None


def _check_doc(check: CheckRecord) -> dict[str, Any]:
    return {
        "tenant": check.tenant,
        "trigger": check.trigger,
        "status": check.status.value,
        "job_id": check.job_id,
        "created_at": check.created_at,
        "finished_at": check.finished_at,
        "summary": dict(check.summary),
        "retention_days": check.retention_days,
        "expire_at": check.expire_at,
    }


def _check(monitor_id: str, check_id: str, doc: dict[str, Any] | None) -> CheckRecord:
    doc = doc or {}
    return CheckRecord(
        id=check_id,
        monitor_id=monitor_id,
        tenant=str(doc.get("tenant", "")),
        trigger=doc.get("trigger", "manual"),
        status=CheckStatus(doc.get("status", CheckStatus.QUEUED.value)),
        created_at=doc["created_at"],
        job_id=doc.get("job_id"),
        finished_at=doc.get("finished_at"),
        summary={str(k): int(v) for k, v in (doc.get("summary") or {}).items()},
        retention_days=int(doc.get("retention_days") or 30),
    )


def _page_doc(page: CheckPage, expire_at: datetime) -> dict[str, Any]:
    return {
        "url": page.url,
        "status": page.status.value,
        "status_code": page.status_code,
        "diff": None if page.diff is None else json.dumps(page.diff),
        "notify": page.notify,
        "held_back_by": list(page.held_back_by),
        "error": page.error,
        "expire_at": expire_at,
    }


def _page(doc: dict[str, Any] | None) -> CheckPage:
    doc = doc or {}
    diff = doc.get("diff")
    return CheckPage(
        url=str(doc.get("url", "")),
        status=PageStatus(doc.get("status", PageStatus.ERROR.value)),
        status_code=doc.get("status_code"),
        diff=None if diff is None else json.loads(diff),
        notify=bool(doc.get("notify")),
        held_back_by=tuple(doc.get("held_back_by") or ()),
        error=doc.get("error"),
    )


def _seen_json(seen: Seen | None) -> str | None:
    if seen is None:
        return None
    return json.dumps({**asdict(seen), "markdown": seen.markdown[:MAX_MARKDOWN]})


def _seen(raw: str | None) -> Seen | None:
    if raw is None:
        return None
    parsed = json.loads(raw)
    return Seen(dict(parsed.get("data") or {}), str(parsed.get("markdown") or ""))


def _snapshot_doc(snapshot: PageSnapshot) -> dict[str, Any]:
    return {
        "url": snapshot.url,
        "written_by": snapshot.written_by,
        "current": _seen_json(snapshot.current),
        "before": _seen_json(snapshot.before),
    }


def _snapshot(doc: dict[str, Any] | None) -> PageSnapshot:
    doc = doc or {}
    return PageSnapshot(
        url=str(doc.get("url", "")),
        written_by=str(doc.get("written_by", "")),
        current=_seen(doc.get("current")),
        before=_seen(doc.get("before")),
    )
