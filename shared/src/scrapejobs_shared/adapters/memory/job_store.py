"""The in-memory twin of the whole store (ports/job_store.py), with the Firestore semantics.

The same transitions (``domain/batch_transitions.py``), always to the batch as it is now (what
the adapter's guarded write or its transaction fallback amounts to): only what is still legal.
Contract tests: tests/contract/test_job_store.py; a bundle's claims: joint_claims.py.
"""

from __future__ import annotations

import asyncio
from collections.abc import Collection, Sequence
from dataclasses import dataclass, replace
from datetime import datetime

from scrapejobs_shared.adapters.memory.joint_claims import MemoryJointClaims
from scrapejobs_shared.adapters.memory.outcome_stats import MemoryStatsReader
from scrapejobs_shared.adapters.page_token import decode_token, encode_token
from scrapejobs_shared.domain import batch_transitions
from scrapejobs_shared.domain.batch_transitions import Applied, Lane
from scrapejobs_shared.domain.job_tally import JobTally, with_tally
from scrapejobs_shared.domain.outcome_stats import Totals, slot_of
from scrapejobs_shared.domain.records import (
    BatchRecord,
    Handoff,
    JobRecord,
    TaskOutcome,
    TaskRecord,
)
from scrapejobs_shared.domain.statuses import JobStatus, TaskStatus
from scrapejobs_shared.domain.workers import WorkerBeat, WorkerView
from scrapejobs_shared.politeness.host_key import host_key
from scrapejobs_shared.ports.job_store import (
    AlreadyDone,
    Busy,
    Claimed,
    ClaimResult,
    JobExists,
    Missing,
    Page,
    Settled,
    TaskChange,
    holds_its_batch,
)
from scrapejobs_shared.ports.page_cache import KeptPage, kept_page


@dataclass(frozen=True, slots=True)
class _Handle:
    job_id: str
    batch_id: str


class MemoryJobStore(MemoryStatsReader, MemoryJointClaims):
    def __init__(self) -> None:
        self.jobs: dict[str, JobRecord] = {}
        self.batches: dict[str, dict[str, BatchRecord]] = {}
        self.results: dict[str, dict[str, TaskRecord]] = {}
        self.handed_off: dict[str, dict[str, Handoff]] = {}  # job id → task id → handoff
        self.tallies: dict[str, JobTally] = {}  # job id → its tally (domain/job_tally.py)
        self.rejected: list[tuple[str, str, bytes]] = []
        self.starts: dict[str, datetime] = {}  # jobs' starts recorded by claims
        self.held_jobs: set[str] = set()  # jobs that hold their one batch (create_jobs)
        self.claim_tokens: list[str | None] = []  # what each claim was given
        self._added: dict[str, int] = {}
        self._lock = asyncio.Lock()
        self.stats: dict[datetime, Totals] = {}  # outcome totals by 5-minute slot
        self.tenant_stats: dict[tuple[str, datetime], Totals] = {}  # the same, per tenant
        self.reachable = True  # tests switch it off to play an outage
        self.workers: dict[str, WorkerView] = {}
        self.kept_pages: dict[str, KeptPage] = {}  # the page cache's index (PageCache)
        self.page_cache_reads = 0

    # ---- jobs ----------------------------------------------------------------------------

    async def create_job(self, job: JobRecord, batches: Sequence[BatchRecord]) -> None:
        await self._create(jobs=[(job, batches)], held=False)

    async def create_jobs(
        self, jobs: Sequence[tuple[JobRecord, Sequence[BatchRecord]]]
    ) -> dict[str, str]:
        return await self._create(jobs, held=True)

    async def _create(
        self, jobs: Sequence[tuple[JobRecord, Sequence[BatchRecord]]], held: bool
    ) -> dict[str, str]:
        """``held``: a job of one batch holds it (the port's one-document job)."""
        async with self._lock:
            for job, _ in jobs:
                if job.id in self.jobs:
                    raise JobExists(job.id)
            tokens: dict[str, str] = {}
            for job, batches in jobs:
                if held and holds_its_batch(job, batches):
                    self.held_jobs.add(job.id)
                    tokens[job.id] = f"memory:{job.id}"
                self.jobs[job.id] = job
                self.batches[job.id] = {batch.id: batch for batch in batches}
                self.results[job.id] = {}
                if job.kind == "crawl":
                    for batch in batches:
                        self._mark_found(batch)
            return tokens

    def _mark_found(self, batch: BatchRecord) -> None:
        for item in batch.items:
            self.results[batch.job_id][item.task_id] = batch_transitions.result_record(
                batch, item, TaskOutcome(TaskStatus.QUEUED), batch.created_at
            )

    async def get_job(self, job_id: str) -> JobRecord | None:
        return self.jobs.get(job_id)

    async def job_with_counts(self, job_id: str) -> tuple[JobRecord, dict[TaskStatus, int]] | None:
        job = self.jobs.get(job_id)
        if job is None:
            return None
        if job.started_at is None and job_id in self.starts:
            job = replace(job, started_at=self.starts[job_id])
        if job_id in self.tallies:
            job = with_tally(job, self.tallies[job_id])
        return job, await self.count_tasks(job_id)

    async def list_jobs(
        self,
        status: JobStatus | None,
        page_size: int,
        page_token: str | None,
        tenant: str | None = None,
    ) -> Page[JobRecord]:
        jobs = sorted(self.jobs.values(), key=lambda j: (j.created_at, j.id), reverse=True)
        jobs = [job for job in jobs if status is None or job.status is status]
        jobs = [job for job in jobs if tenant is None or job.tenant == tenant]
        if page_token:
            created_at, last_id = decode_token(page_token, 2)
            cursor = (datetime.fromisoformat(created_at), last_id)
            jobs = [job for job in jobs if (job.created_at, job.id) < cursor]
        page = jobs[:page_size]
        token = None
        if len(jobs) > page_size:
            token = encode_token([page[-1].created_at.isoformat(), page[-1].id])
        return Page(page, token)

    async def set_job_status(self, job_id: str, status: JobStatus, now: datetime) -> bool:
        async with self._lock:
            job = self.jobs.get(job_id)
            if job is None or not job.status.may_become(status):
                return False
            moved = replace(job, status=status, updated_at=now)
            if status is JobStatus.RUNNING:
                moved = replace(moved, started_at=now)
            elif status.terminal:
                moved = replace(moved, finished_at=now)
            self.jobs[job_id] = moved
            return True

    async def cancel_job(self, job_id: str, now: datetime) -> bool:
        return await self.set_job_status(job_id, JobStatus.CANCELLED, now)

    async def delete_job(self, job_id: str) -> None:
        async with self._lock:
            for documents in (self.jobs, self.batches, self.results, self._added):
                documents.pop(job_id, None)

    async def mark_published(self, job_ids: Sequence[str], now: datetime) -> None:
        async with self._lock:
            for job_id in job_ids:
                self.jobs[job_id] = replace(self.jobs[job_id], publishing=False, updated_at=now)

    async def stuck_publishing(self, created_before: datetime, limit: int) -> list[JobRecord]:
        stuck = [j for j in self.jobs.values() if j.publishing and j.created_at < created_before]
        return stuck[:limit]

    async def finished_between(
        self, since: datetime, until: datetime, limit: int
    ) -> list[JobRecord]:
        ended = [
            job
            for job in self.jobs.values()
            if job.finished_at is not None and since <= job.finished_at < until
        ]
        return ended[:limit]

    async def count_tasks(self, job_id: str) -> dict[TaskStatus, int]:
        counts = dict.fromkeys(TaskStatus, 0)
        for batch in self.batches.get(job_id, {}).values():
            for item in batch.items:
                counts[item.status] += 1
        return counts

    async def has_open_tasks(self, job_id: str) -> bool:
        return any(batch.open_items for batch in self.batches.get(job_id, {}).values())

    async def list_tasks(
        self, job_id: str, page_size: int, page_token: str | None
    ) -> Page[TaskRecord]:
        ordered = sorted(self.results.get(job_id, {}).values(), key=lambda t: t.id)
        if page_token:
            (last_id,) = decode_token(page_token, 1)
            ordered = [task for task in ordered if task.id > last_id]
        page = ordered[:page_size]
        token = encode_token([page[-1].id]) if len(ordered) > page_size else None
        return Page(page, token)

    async def get_task(self, job_id: str, task_id: str) -> TaskRecord | None:
        return self.results.get(job_id, {}).get(task_id)

    async def record_rejected_message(
        self, message_id: str, reason: str, payload: bytes, now: datetime
    ) -> None:
        self.rejected.append((message_id, reason, payload))

    # ---- batches -------------------------------------------------------------------------

    async def add_batch(self, batch: BatchRecord, max_new: int | None = None) -> BatchRecord | None:
        async with self._lock:
            if batch.job_id not in self.jobs:
                return None
            existing = self.batches[batch.job_id].get(batch.id)
            if existing is not None:
                return existing
            known = self.results[batch.job_id]
            fresh = [item for item in batch.items if item.task_id not in known]
            added = self._added.get(batch.job_id, 0)
            if max_new is not None:
                fresh = fresh[: max(0, max_new - added)]
            if not fresh:
                return None
            stored = replace(batch, items=tuple(fresh), lease_until=None)
            self.batches[batch.job_id][batch.id] = stored
            self._added[batch.job_id] = added + len(fresh)
            self._mark_found(stored)
            return stored

    async def open_batches(
        self, job_id: str, page_size: int, page_token: str | None
    ) -> Page[BatchRecord]:
        batches = sorted(
            (b for b in self.batches.get(job_id, {}).values() if b.open_items),
            key=lambda b: (len(b.open_items), b.id),
        )
        if page_token:
            open_count, last_id = decode_token(page_token, 2)
            cursor = (int(open_count), last_id)
            batches = [b for b in batches if (len(b.open_items), b.id) > cursor]
        page = batches[:page_size]
        token = None
        if len(batches) > page_size:
            token = encode_token([str(len(page[-1].open_items)), page[-1].id])
        return Page(page, token)

    async def stalled_batches(
        self, updated_before: datetime, now: datetime, limit: int
    ) -> list[BatchRecord]:
        stalled = [
            batch
            for batches in self.batches.values()
            for batch in batches.values()
            if batch.active
            and (batch.updated_at or batch.created_at) < updated_before
            and (batch.lease_until is None or batch.lease_until <= now)
        ]
        return sorted(stalled, key=lambda b: b.updated_at or b.created_at)[:limit]

    async def progressed_since(
        self, since: datetime, until: datetime, job_id: str | None = None
    ) -> bool:
        jobs = [job_id] if job_id is not None else list(self.batches)
        return any(
            since < (batch.updated_at or batch.created_at) <= until
            for job in jobs
            for batch in self.batches.get(job, {}).values()
        )

    async def tasks_with_status(
        self,
        status: TaskStatus,
        job_id: str | None,
        host: str | None,
        page_size: int,
        page_token: str | None,
        tenant: str | None = None,
    ) -> Page[TaskRecord]:
        jobs = [job_id] if job_id is not None else list(self.results)
        found = [
            task
            for job in jobs
            for task in self.results.get(job, {}).values()
            if task.status is status
            and (host is None or _host(task.url) == host)
            and (tenant is None or task.tenant == tenant)
        ]
        found.sort(key=lambda t: (t.updated_at, t.job_id, t.id), reverse=True)
        if page_token:
            updated_at, last_job, last_task = decode_token(page_token, 3)
            cursor = (datetime.fromisoformat(updated_at), last_job, last_task)
            found = [t for t in found if (t.updated_at, t.job_id, t.id) < cursor]
        page = found[:page_size]
        token = None
        if len(found) > page_size:
            last = page[-1]
            token = encode_token([last.updated_at.isoformat(), last.job_id, last.id])
        return Page(page, token)

    async def reopen(
        self,
        job_id: str,
        batch_id: str,
        task_ids: Sequence[str],
        statuses: frozenset[TaskStatus],
        now: datetime,
    ) -> BatchRecord | None:
        async with self._lock:
            job = self.jobs.get(job_id)
            batch = self.batches.get(job_id, {}).get(batch_id)
            if job is None or batch is None or job.status is JobStatus.CANCELLED:
                return None
            wanted = set(task_ids)
            applied = batch_transitions.reopen(batch, wanted, set(statuses))
            if not applied.deltas:
                return None
            self._write(applied, now)
            queued = tuple(
                i
                for i in applied.batch.items
                if i.task_id in wanted and i.status is TaskStatus.QUEUED
            )
            self._mark_found(replace(applied.batch, items=queued))
            if job.status is JobStatus.COMPLETED:
                self.jobs[job_id] = replace(
                    job, status=JobStatus.RUNNING, updated_at=now, finished_at=None
                )
            return self.batches[job_id][batch_id]

    async def claim_batch(
        self,
        job_id: str,
        batch_id: str,
        now: datetime,
        lease_until: datetime,
        *,
        mark_started: bool = False,
        lane: Lane = "fetch",
        claim_token: str | None = None,
    ) -> ClaimResult:
        self.claim_tokens.append(claim_token)
        async with self._lock:
            batch = self.batches.get(job_id, {}).get(batch_id)
            job = self.jobs.get(job_id)
            if batch is None or job is None:
                return Missing()
            if not batch.open_items:
                return AlreadyDone()
            if batch.lease_until is not None and batch.lease_until > now:
                return Busy(batch.lease_until)
            if job_id in self.held_jobs:  # the job's own document: running, started, published
                moved = replace(job, publishing=False)
                if job.status is JobStatus.QUEUED:
                    moved = replace(moved, status=JobStatus.RUNNING, updated_at=now)
                self.jobs[job_id] = replace(moved, started_at=job.started_at or now)
            elif mark_started and _first_claim(batch):
                self.starts.setdefault(job_id, now)  # as Firestore keeps it: on the counts
            applied = batch_transitions.claim(batch, lease_until, lane)
            handle = self._write(applied, now)
            return Claimed(applied.batch, job.status is JobStatus.CANCELLED, handle)

    async def settle(
        self,
        handle: object,
        changes: Sequence[TaskChange],
        now: datetime,
        lease_until: datetime | None = None,
        beat: WorkerBeat | None = None,
    ) -> Settled:
        assert isinstance(handle, _Handle), "settle takes the handle of a claim"
        if beat is not None:
            await self.report(beat)
        async with self._lock:
            batch = self.batches.get(handle.job_id, {}).get(handle.batch_id)
            if batch is None:
                return Settled(handle, (), False, False)
            applied = batch_transitions.settle(batch, changes, now)
            if lease_until is not None:
                applied = replace(applied, batch=replace(applied.batch, lease_until=lease_until))
            settled = self._settled(applied, now)
            if handle.job_id in self.held_jobs and not applied.batch.open_items:
                return self._completed(settled, now)  # its one batch: no open task left
            if settled.finished or applied.batch.open_items:
                return settled
            # finished nothing, yet the batch is closed: a retry of a settle that landed
            open_left = any(b.open_items for b in self.batches[handle.job_id].values())
            return replace(settled, job_may_be_done=not open_left)

    def _completed(self, settled: Settled, now: datetime) -> Settled:
        """A job that holds its batch, whose last task this settle closed: completed by the
        same write (while it runs)."""
        assert isinstance(settled.handle, _Handle)
        job = self.jobs[settled.handle.job_id]
        if job.status not in (JobStatus.QUEUED, JobStatus.RUNNING):
            return replace(settled, job_may_be_done=True)
        done = replace(job, status=JobStatus.COMPLETED, updated_at=now, finished_at=now)
        self.jobs[job.id] = done
        return replace(settled, job_may_be_done=True, job_completed=True)

    async def get_many(self, keys: Sequence[str], fetched_after: datetime) -> dict[str, KeptPage]:
        """PageCache: the page cache entries settles wrote (the store is its memory twin)."""
        self.page_cache_reads += 1
        found = {key: self.kept_pages[key] for key in keys if key in self.kept_pages}
        return {key: page for key, page in found.items() if page.fetched_at > fetched_after}

    async def close_batch(
        self,
        job_id: str,
        batch_id: str,
        outcome: TaskOutcome,
        now: datetime,
        statuses: Collection[TaskStatus] | None = None,
        spent_at: int | None = None,
    ) -> Settled | Busy | Missing:
        async with self._lock:
            batch = self.batches.get(job_id, {}).get(batch_id)
            if batch is None:
                return Missing()
            if batch.lease_until is not None and batch.lease_until > now:
                return Busy(batch.lease_until)
            applied = batch_transitions.close(batch, outcome, now, statuses, spent_at)
            left = batch_transitions.closable(applied.batch, statuses)
            settled = self._settled(applied, now)
            return replace(settled, left_open=tuple(item.task_id for item in left))

    async def handoffs(self, job_id: str, task_ids: Sequence[str]) -> dict[str, Handoff]:
        kept = self.handed_off.get(job_id, {})
        return {task_id: kept[task_id] for task_id in task_ids if task_id in kept}

    def _settled(self, applied: Applied, now: datetime) -> Settled:
        handle = self._write(applied, now)
        job_id = applied.batch.job_id
        job = self.jobs[job_id]
        open_left = any(b.open_items for b in self.batches[job_id].values())
        return Settled(
            handle,
            applied.finished,
            job.status is JobStatus.CANCELLED,
            bool(applied.finished) and not open_left,
        )

    def _write(self, applied: Applied, now: datetime) -> _Handle:
        if not applied.stats.empty:
            slot = slot_of(now)
            self.stats[slot] = self.stats.get(slot, Totals()) + applied.stats
            of_tenant = (applied.batch.tenant, slot)
            self.tenant_stats[of_tenant] = (
                self.tenant_stats.get(of_tenant, Totals()) + applied.stats
            )
        batch = replace(applied.batch, updated_at=now)
        self.batches[batch.job_id][batch.id] = batch
        for record in applied.results:
            self.results[batch.job_id][record.id] = record
        for key, record in applied.kept:
            self.kept_pages[key] = kept_page(record, now)[0]
        if not applied.tally.empty:
            self.tallies[batch.job_id] = self.tallies.get(batch.job_id, JobTally()) + applied.tally
        kept = self.handed_off.setdefault(batch.job_id, {})
        kept.update(applied.handoffs)
        for task_id in applied.handoffs_done:
            kept.pop(task_id, None)
        return _Handle(batch.job_id, batch.id)

    async def ping(self) -> None:
        if not self.reachable:
            raise ConnectionError("the memory store is switched off")

    # --- WorkerDirectory: the workers view ---------------------------------------------------

    async def report(self, beat: WorkerBeat) -> None:
        known = self.workers.get(beat.worker_id)
        self.workers[beat.worker_id] = WorkerView(
            worker_id=beat.worker_id,
            revision=beat.revision,
            started_at=beat.started_at,
            last_seen=beat.seen_at,
            batches=(known.batches if known else 0) + beat.batches,
            pages=(known.pages if known else 0) + beat.pages,
            batches_in_flight=beat.batches_in_flight,
            pages_in_flight=beat.pages_in_flight,
        )

    async def seen_since(self, since: datetime, limit: int) -> list[WorkerView]:
        seen = [w for w in self.workers.values() if w.last_seen > since]
        return sorted(seen, key=lambda w: w.last_seen, reverse=True)[:limit]


def _host(url: str) -> str:
    try:
        return host_key(url)
    except ValueError:
        return ""


def _first_claim(batch: BatchRecord) -> bool:
    return all(item.attempts == 0 for item in batch.items)
