"""MonitorChecks on Firestore, under each monitor's document:

* ``monitors/{id}/checks/{check_id}``: ``tenant``, ``trigger``, ``status``, ``job_id``,
  ``created_at``, ``finished_at``, ``summary``, ``lease_until`` (who compares it), ``open``
  (unfinished: the tick's collection-group query, ``open`` and ``created_at``) and
  ``expire_at`` (the monitor's retention: Firestore's TTL deletes it);
* ``.../checks/{check_id}/check_pages/{page_key}``, a page that is not ``same``: ``url``,
  ``status``, ``status_code``, ``diff`` (JSON), ``notify``, ``held_back_by``, ``error``,
  ``expire_at``;
* ``.../checks/{check_id}/same_pages/{nnnnn}``: the ``same`` pages, a chunk of up to
  ``CHUNK_BYTES`` of URLs each (``pages``: JSON of ``[url, status_code]`` in key order;
  ``first`` and ``last``: the keys it spans; ``expire_at``), so an unchanged page costs no
  write of its own;
* ``monitors/{id}/snapshots/{page_key}``: ``url``, ``written_by``, ``current`` and ``before``
  (JSON of what a check found: its data and markdown, the markdown cut at
  ``MAX_MARKDOWN`` characters), ``has_current`` and ``has_before`` (read without the
  content), ``validators``; kept while the monitor is (a scrape's change tracking keeps its
  team's and tag's under ``monitors/trk_.../snapshots``, with an ``expire_at``).

A check's pages and snapshots are written in commits of ``COMMIT_SIZE`` documents as its
comparison goes, its same pages and then its final status last."""

from __future__ import annotations

import contextlib
import json
from collections.abc import Sequence
from datetime import datetime
from typing import Any

from google.api_core import exceptions as gexc
from google.cloud import firestore
from google.cloud.firestore_v1.base_query import FieldFilter

from scrapejobs_shared.adapters.firestore.call_deadline import reports_outages
from scrapejobs_shared.adapters.firestore.collection_adapter import CollectionAdapter
from scrapejobs_shared.adapters.firestore.monitor_store import COLLECTION
from scrapejobs_shared.domain.monitor_checks import (
    CheckPage,
    CheckRecord,
    CheckStatus,
    PageSnapshot,
    PageStatus,
    Seen,
    SnapshotEntry,
    page_key,
)
from scrapejobs_shared.domain.page_validators import PageValidators
from scrapejobs_shared.observability.store_ops import count
from scrapejobs_shared.ports.page import PageRequest

CHECKS, CHECK_PAGES, SNAPSHOTS = "checks", "check_pages", "snapshots"
SAME_PAGES = "same_pages"
ENTRY_FIELDS = ["url", "written_by", "has_current", "has_before", "validators"]
COMMIT_SIZE = 200
CHUNK_BYTES = 256 * 1024  # of URLs in one chunk of a check's same pages
MAX_MARKDOWN = 300_000  # characters of a page's markdown a snapshot keeps (a document < 1 MiB)


@reports_outages
class FirestoreMonitorChecks(CollectionAdapter):
    collection = COLLECTION

    def _check_ref(self, monitor_id: str, check_id: str) -> Any:
        return self._collection.document(monitor_id).collection(CHECKS).document(check_id)

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
            self._collection.document(monitor_id)
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

    async def open_checks(self, limit: int, tenant: str | None = None) -> list[CheckRecord]:
        query = self._client.collection_group(CHECKS).where(filter=FieldFilter("open", "==", True))
        if tenant is not None:
            query = query.where(filter=FieldFilter("tenant", "==", tenant))
        query = query.order_by("created_at").limit(limit)
        found = [
            _check(s.reference.parent.parent.id, s.id, s.to_dict())
            async for s in query.stream(**self._deadline.call)
        ]
        count(reads=max(1, len(found)))
        return found

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

    async def snapshot_entries(self, monitor_id: str) -> list[SnapshotEntry]:
        query = self._collection.document(monitor_id).collection(SNAPSHOTS).select(ENTRY_FIELDS)
        found = [_entry(s.to_dict()) async for s in query.stream(**self._deadline.call)]
        count(reads=max(1, len(found)))
        return found

    async def snapshots_of(self, monitor_id: str, urls: Sequence[str]) -> dict[str, PageSnapshot]:
        if not urls:
            return {}
        snapshots = self._collection.document(monitor_id).collection(SNAPSHOTS)
        refs = [snapshots.document(page_key(url)) for url in dict.fromkeys(urls)]
        count(reads=len(refs))
        found = [
            _snapshot(s.to_dict())
            async for s in self._client.get_all(refs, **self._deadline.call)
            if s.exists
        ]
        return {s.url: s for s in found}

    async def record(
        self, check: CheckRecord, pages: Sequence[CheckPage], snapshots: Sequence[PageSnapshot]
    ) -> None:
        monitor = self._collection.document(check.monitor_id)
        check_pages = self._check_ref(check.monitor_id, check.id).collection(CHECK_PAGES)
        expire_at = check.expire_at
        writes = [(check_pages.document(p.key), _page_doc(p, expire_at)) for p in pages]
        writes += [
            (monitor.collection(SNAPSHOTS).document(s.key), _snapshot_doc(s)) for s in snapshots
        ]
        await self._commit(writes)

    async def keep(
        self, monitor_id: str, snapshots: Sequence[PageSnapshot], expire_at: datetime
    ) -> None:
        kept = self._collection.document(monitor_id).collection(SNAPSHOTS)
        writes = [
            (kept.document(s.key), _snapshot_doc(s) | {"expire_at": expire_at}) for s in snapshots
        ]
        await self._commit(writes)

    async def finish(self, check: CheckRecord, same: Sequence[CheckPage]) -> None:
        check_ref = self._check_ref(check.monitor_id, check.id)
        chunks = check_ref.collection(SAME_PAGES)
        writes = [
            (chunks.document(f"{n:05d}"), chunk | {"expire_at": check.expire_at})
            for n, chunk in enumerate(_same_chunks(same))
        ]
        await self._commit(writes)
        count(writes=1)
        final = _check_doc(check) | {"lease_until": None}
        await check_ref.set(final, **self._deadline.call)

    async def _commit(self, writes: Sequence[tuple[Any, dict[str, Any]]]) -> None:
        for start in range(0, len(writes), COMMIT_SIZE):
            commit = self._client.batch()
            for ref, doc in writes[start : start + COMMIT_SIZE]:
                commit.set(ref, doc)
            count(writes=len(writes[start : start + COMMIT_SIZE]))
            await commit.commit(**self._deadline.call)

    async def pages(
        self, monitor_id: str, check_id: str, status: PageStatus | None, page: PageRequest
    ) -> tuple[list[CheckPage], str | None]:
        """The pages that are not ``same`` (documents), then the ``same`` ones (chunks); a
        token is a page's key, in the chunks when no page document has it."""
        limit, after = page.size, page.token
        check_ref = self._check_ref(monitor_id, check_id)
        in_documents = status is not PageStatus.SAME and (
            not after or await self._has_page(check_ref, after)
        )
        found: list[CheckPage] = []
        if in_documents:
            found = await self._page_documents(check_ref, status, limit + 1, after)
            after = None
        if status in (None, PageStatus.SAME) and len(found) <= limit:
            found += await self._same_pages(check_ref, limit + 1 - len(found), after)
        listed = found[:limit]
        return listed, listed[-1].key if len(found) > limit and listed else None

    async def _has_page(self, check_ref: Any, key: str) -> bool:
        count(reads=1)
        ref = check_ref.collection(CHECK_PAGES).document(key)
        return bool((await ref.get(**self._deadline.call)).exists)

    async def _page_documents(
        self, check_ref: Any, status: PageStatus | None, limit: int, after: str | None
    ) -> list[CheckPage]:
        collection = check_ref.collection(CHECK_PAGES)
        query: Any = collection
        if status is not None:
            query = query.where(filter=FieldFilter("status", "==", status.value))
        query = query.order_by("__name__")
        if after:
            query = query.start_after({"__name__": collection.document(after)})
        found = [_page(s.to_dict()) async for s in query.limit(limit).stream(**self._deadline.call)]
        count(reads=max(1, len(found)))
        return found

    async def _same_pages(self, check_ref: Any, limit: int, after: str | None) -> list[CheckPage]:
        query = check_ref.collection(SAME_PAGES).order_by("last")
        if after:
            query = query.where(filter=FieldFilter("last", ">", after))
        found: list[CheckPage] = []
        async for chunk in query.stream(**self._deadline.call):
            count(reads=1)
            found += [p for p in _same_pages(chunk.to_dict()) if not after or p.key > after]
            if len(found) >= limit:
                break
        return found[:limit]


def _same_chunks(same: Sequence[CheckPage]) -> list[dict[str, Any]]:
    """The ``same`` pages, in key order, as chunk documents of at most ``CHUNK_BYTES`` of
    pages each (``first`` and ``last``: the keys they span)."""
    chunks: list[dict[str, Any]] = []
    rows: list[list[Any]] = []
    size = 0
    ordered = sorted(same, key=lambda page: page.key)
    for n, page in enumerate(ordered, 1):
        rows.append([page.url, page.status_code])
        size += len(page.url.encode()) + 16
        if size >= CHUNK_BYTES or n == len(ordered):
            chunks.append(
                {
                    "first": page_key(rows[0][0]),
                    "last": page.key,
                    "pages": json.dumps(rows, separators=(",", ":"), ensure_ascii=False),
                }
            )
            rows, size = [], 0
    return chunks


def _same_pages(doc: dict[str, Any] | None) -> list[CheckPage]:
    rows = json.loads((doc or {}).get("pages") or "[]")
    return [CheckPage(str(url), PageStatus.SAME, code) for url, code in rows]


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
        "open": not check.finished,  # the tick's query: unfinished checks of every monitor
        "departed": None if check.departed is None else list(check.departed),
        "error": check.error,
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
        departed=None if doc.get("departed") is None else tuple(doc["departed"]),
        error=doc.get("error"),
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
    at = None if seen.at is None else seen.at.isoformat()
    return json.dumps({"data": seen.data, "markdown": seen.markdown[:MAX_MARKDOWN], "at": at})


def _seen(raw: str | None) -> Seen | None:
    if raw is None:
        return None
    parsed = json.loads(raw)
    at = parsed.get("at")
    return Seen(
        dict(parsed.get("data") or {}),
        str(parsed.get("markdown") or ""),
        None if at is None else datetime.fromisoformat(at),
    )


def _snapshot_doc(snapshot: PageSnapshot) -> dict[str, Any]:
    validators = snapshot.validators
    return {
        "url": snapshot.url,
        "written_by": snapshot.written_by,
        "current": _seen_json(snapshot.current),
        "before": _seen_json(snapshot.before),
        "has_current": snapshot.current is not None,
        "has_before": snapshot.before is not None,
        "validators": None if validators is None else validators.to_doc(),
    }


def _snapshot(doc: dict[str, Any] | None) -> PageSnapshot:
    doc = doc or {}
    return PageSnapshot(
        url=str(doc.get("url", "")),
        written_by=str(doc.get("written_by", "")),
        current=_seen(doc.get("current")),
        before=_seen(doc.get("before")),
        validators=PageValidators.from_doc(doc.get("validators")),
    )


def _entry(doc: dict[str, Any] | None) -> SnapshotEntry:
    doc = doc or {}
    return SnapshotEntry(
        url=str(doc.get("url", "")),
        written_by=str(doc.get("written_by", "")),
        has_current=bool(doc.get("has_current")),
        has_before=bool(doc.get("has_before")),
        validators=PageValidators.from_doc(doc.get("validators")),
    )
