"""Outcome statistics on Firestore.

Writes, of pages' outcomes (``FirestoreStatsWriter.put``): each process's totals of a tenant's
5-minute slot, whole, on a document of its own, ``stats_slots/{source}~{slot}~{tenant}``, at
most once every ``stats_every_s`` (delivery/stats_buffer.py): a document takes at most one
write a second, and the writes grow with the processes, not the pages (docs/scale.md). Of
searches (``OutcomeStats.stage``, the usage meter): a blind increment of a random shard of the
slot, ``stats_slots/{slot}-{tenant}-{shard}``, in the commit that meters them.

Reads (``FirestoreStats``) sum a slot's shards with one query, and roll up what can no longer
change: a slot, an hour or a day that ended more than ``GRACE`` ago is summed once into
``stats_rollups/{s|h|d}{start}`` and read from there ever after. A 24-hour window or history
therefore reads about one document per hour plus the last hour's slots, and a month of usage
about one per day. Slots and hours are kept ``RETENTION``; days ``DAY_RETENTION`` (a year of
usage history): a day is summed from its hours while they are kept (the daily usage
maintenance call does, ``POST /v1/maintenance/usage``), and is absent after.
"""

from __future__ import annotations

import asyncio
import random
from collections.abc import Awaitable, Callable, Mapping, Sequence
from dataclasses import dataclass
from datetime import datetime, timedelta
from functools import partial
from typing import Any

from google.cloud import firestore
from google.cloud.firestore_v1.base_query import FieldFilter

from scrapejobs_shared.adapters.firestore.batch_in_job import batch_in
from scrapejobs_shared.adapters.firestore.batch_in_job import counts_of as counts_of_batch
from scrapejobs_shared.adapters.firestore.call_deadline import CallDeadline, reports_outages
from scrapejobs_shared.adapters.firestore.counters import ShardedCounters
from scrapejobs_shared.domain.outcome_stats import (
    DAY,
    HOUR,
    SLOT,
    Totals,
    hours_of_day,
    slots_of_hour,
)
from scrapejobs_shared.domain.statuses import JobStatus, TaskStatus
from scrapejobs_shared.observability.store_ops import count
from scrapejobs_shared.ports.outcome_stats import OpenWork, SourceTotals

DEFAULT_SHARDS = 16
GRACE = timedelta(minutes=2)  # commits stamped by skewed clocks still land in a slot this late
RETENTION = timedelta(days=35)  # history is read up to 7 days back; TTL deletes the rest
DAY_RETENTION = timedelta(days=400)  # usage is read by month, up to a year back
PUT_LIMIT = 500  # Firestore's writes a commit
ACTIVE = (JobStatus.QUEUED.value, JobStatus.RUNNING.value)


@dataclass(frozen=True, slots=True)
class Span:
    """A rollup level: how long one lasts, its parts, how they are read, how long its rollup
    is kept, and how long its parts are (None: summed whatever its age)."""

    length: timedelta
    parts_of: Callable[[datetime], list[datetime]]
    read_parts: Callable[[Sequence[datetime], datetime], Awaitable[dict[datetime, Totals]]]
    kept: timedelta
    parts_kept: timedelta | None = None


def _slot_id(slot: datetime) -> str:
    return slot.strftime("%Y%m%dT%H%M")


def _rollup_id(kind: str, start: datetime, tenant: str | None) -> str:
    """``s|h|d`` + the start, every tenant's; with ``~tenant``, one tenant's."""
    return kind + _slot_id(start) + ("" if tenant is None else f"~{tenant}")


class OutcomeStats:
    """Stages outcome totals into a commit (a write batch or a transaction)."""

    def __init__(self, client: firestore.AsyncClient, shards: int = DEFAULT_SHARDS) -> None:
        self._slots = client.collection("stats_slots")
        self._shards = shards

    def stage(self, writer: Any, slot: datetime, totals: Totals, tenant: str) -> int:
        """Add ``totals`` of ``tenant``'s jobs to a random shard of ``slot`` (each tenant has
        its own shards); the number of writes staged."""
        if totals.empty:
            return 0
        shard = random.randrange(self._shards)
        ref = self._slots.document(f"{_slot_id(slot)}-{tenant}-{shard:02d}")
        fields: dict[str, Any] = {
            name: firestore.Increment(n) for name, n in totals.to_fields().items()
        }
        place = {"slot": slot, "tenant": tenant, "expire_at": slot + RETENTION}
        writer.set(ref, fields | place, merge=True)
        return 1


@reports_outages
class FirestoreStatsWriter:
    """StatsWriter (ports/outcome_stats.py): a process's totals set on its own documents."""

    def __init__(self, client: firestore.AsyncClient, deadline: CallDeadline | None = None) -> None:
        self._client = client
        self._deadline = deadline or CallDeadline()
        self._slots = client.collection("stats_slots")

    async def put(self, source: str, entries: Sequence[SourceTotals]) -> None:
        for start in range(0, len(entries), PUT_LIMIT):
            commit = self._client.batch()
            part = entries[start : start + PUT_LIMIT]
            for entry in part:
                ref = self._slots.document(f"{source}~{_slot_id(entry.slot)}~{entry.tenant}")
                place = {"slot": entry.slot, "tenant": entry.tenant}
                expire_at = {"expire_at": entry.slot + RETENTION}
                commit.set(ref, entry.totals.to_fields() | place | expire_at)
            count(writes=len(part))
            await commit.commit(**self._deadline.call)


@reports_outages
class FirestoreStats:
    def __init__(self, client: firestore.AsyncClient, deadline: CallDeadline | None = None) -> None:
        self._client = client
        self._deadline = deadline or CallDeadline()
        self._slots = client.collection("stats_slots")
        self._rollups = client.collection("stats_rollups")
        self._jobs = client.collection("jobs")
        self._counters = ShardedCounters(client, self._deadline)

    async def ping(self) -> None:
        count(reads=1)
        await self._rollups.document("ping").get(timeout=3)

    async def slot_totals(
        self, slots: Sequence[datetime], now: datetime, tenant: str | None = None
    ) -> dict[datetime, Totals]:
        totals = await self._rolled("s", slots, tenant)
        missing = sorted(set(slots) - set(totals))
        if missing:
            summed = await self._sum_shards(missing[0], missing[-1], tenant)
            for slot in missing:
                totals[slot] = summed.get(slot, Totals())
            ended = {s: totals[s] for s in missing if s + SLOT + GRACE <= now}
            await self._roll_up("s", ended, RETENTION, tenant)
        return totals

    async def hour_totals(
        self, hours: Sequence[datetime], now: datetime, tenant: str | None = None
    ) -> dict[datetime, Totals]:
        slots = partial(self.slot_totals, tenant=tenant)
        return await self._summed(
            "h", hours, now, Span(HOUR, slots_of_hour, slots, RETENTION), tenant
        )

    async def day_totals(
        self, days: Sequence[datetime], now: datetime, tenant: str | None = None
    ) -> dict[datetime, Totals]:
        # a day whose hours are gone (older than RETENTION) and was never summed: absent
        hours = partial(self.hour_totals, tenant=tenant)
        span = Span(DAY, hours_of_day, hours, DAY_RETENTION, parts_kept=RETENTION)
        return await self._summed("d", days, now, span, tenant)

    async def _summed(
        self,
        kind: str,
        starts: Sequence[datetime],
        now: datetime,
        span: Span,
        tenant: str | None,
    ) -> dict[datetime, Totals]:
        """Totals of each span starting at ``starts``: its rollup, or the sum of its parts
        (rolled up in turn once the span has ended)."""
        totals = await self._rolled(kind, starts, tenant)
        missing = sorted(
            start
            for start in set(starts) - set(totals)
            if span.parts_kept is None or start + span.length + span.parts_kept > now
        )
        if missing:
            by_part = await span.read_parts([p for s in missing for p in span.parts_of(s)], now)
            for start in missing:
                totals[start] = sum((by_part[p] for p in span.parts_of(start)), Totals())
            ended = {s: totals[s] for s in missing if s + span.length + GRACE <= now}
            await self._roll_up(kind, ended, span.kept, tenant)
        return {start: totals.get(start, Totals()) for start in starts}

    async def _rolled(
        self, kind: str, starts: Sequence[datetime], tenant: str | None
    ) -> dict[datetime, Totals]:
        if not starts:
            return {}
        refs = {self._rollups.document(_rollup_id(kind, s, tenant)).id: s for s in starts}
        found: dict[datetime, Totals] = {}
        count(reads=len(refs))
        async for snap in self._client.get_all(
            [self._rollups.document(i) for i in refs], **self._deadline.call
        ):
            if snap.exists:
                found[refs[snap.id]] = Totals.from_fields(snap.to_dict() or {})
        return found

    async def _sum_shards(
        self, first: datetime, last: datetime, tenant: str | None
    ) -> dict[datetime, Totals]:
        query: Any = self._slots
        if tenant is not None:
            query = query.where(filter=FieldFilter("tenant", "==", tenant))
        query = query.where(filter=FieldFilter("slot", ">=", first)).where(
            filter=FieldFilter("slot", "<=", last)
        )
        summed: dict[datetime, Totals] = {}
        reads = 0
        async for snap in query.stream(**self._deadline.call):
            reads += 1
            doc = snap.to_dict() or {}
            slot = doc["slot"]
            summed[slot] = summed.get(slot, Totals()) + Totals.from_fields(doc)
        count(reads=max(reads, 1))
        return summed

    async def _roll_up(
        self,
        kind: str,
        totals: Mapping[datetime, Totals],
        kept: timedelta,
        tenant: str | None,
    ) -> None:
        items = list(totals.items())
        for start in range(0, len(items), 400):
            commit = self._client.batch()
            for begin, value in items[start : start + 400]:
                doc = value.to_fields() | {"expire_at": begin + kept}
                commit.set(self._rollups.document(_rollup_id(kind, begin, tenant)), doc)
            count(writes=len(items[start : start + 400]))
            await commit.commit(**self._deadline.call)

    async def jobs_by_status(self, tenant: str | None = None) -> dict[JobStatus, int]:
        async def count_of(status: JobStatus) -> int:
            query = self._of_tenant(tenant).where(filter=FieldFilter("status", "==", status.value))
            result = await query.count().get(**self._deadline.call)
            count(reads=1)
            return int(result[0][0].value)

        statuses = list(JobStatus)
        counts = await asyncio.gather(*(count_of(status) for status in statuses))
        return dict(zip(statuses, counts, strict=True))

    def _of_tenant(self, tenant: str | None) -> Any:
        if tenant is None:
            return self._jobs
        return self._jobs.where(filter=FieldFilter("tenant", "==", tenant))

    async def open_work(self, max_jobs: int, tenant: str | None = None) -> OpenWork:
        query = (
            self._of_tenant(tenant)
            .where(filter=FieldFilter("status", "in", list(ACTIVE)))
            .limit(max_jobs + 1)
        )
        jobs = [snap async for snap in query.stream(**self._deadline.call)]
        count(reads=max(len(jobs), 1))
        partial = len(jobs) > max_jobs
        jobs = jobs[:max_jobs]

        async def counts_of(snap: Any) -> tuple[dict[TaskStatus, int], datetime | None]:
            doc = snap.to_dict() or {}
            batch = batch_in(snap.id, doc)
            if batch is not None:  # a job that holds its batch: its counts are the batch's
                return counts_of_batch(batch), doc.get("created_at")
            shards = int(doc.get("counter_shards") or 1)
            return await self._counters.read(snap.reference, shards), doc.get("created_at")

        queued = running = processing = 0
        oldest: datetime | None = None
        for counts, created_at in await asyncio.gather(*(counts_of(snap) for snap in jobs)):
            queued += counts[TaskStatus.QUEUED]
            running += counts[TaskStatus.RUNNING]
            processing += counts[TaskStatus.PROCESSING]
            if counts[TaskStatus.QUEUED] and created_at is not None:
                oldest = created_at if oldest is None else min(oldest, created_at)
        return OpenWork(queued, running, oldest, len(jobs), partial, processing)
