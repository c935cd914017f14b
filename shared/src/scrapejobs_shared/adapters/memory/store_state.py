"""What the memory twin's parts share (job_store.py): the documents, one lock, and the commit.

A commit is one step under the lock, always to the batch as it is now (what the Firestore
adapter's guarded write or its transaction fallback amounts to): only what is still legal.
"""

from __future__ import annotations

import asyncio
from dataclasses import dataclass, replace
from datetime import datetime

from scrapejobs_shared.domain import batch_transitions
from scrapejobs_shared.domain.batch_transitions import Applied
from scrapejobs_shared.domain.job_tally import JobTally
from scrapejobs_shared.domain.outcome_stats import Totals, slot_of
from scrapejobs_shared.domain.records import (
    BatchRecord,
    Handoff,
    JobRecord,
    TaskOutcome,
    TaskRecord,
)
from scrapejobs_shared.domain.statuses import JobStatus, TaskStatus
from scrapejobs_shared.domain.workers import WorkerView
from scrapejobs_shared.ports.job_store import Settled
from scrapejobs_shared.ports.page_cache import KeptPage, kept_page


@dataclass(frozen=True, slots=True)
class Handle:
    job_id: str
    batch_id: str


class MemoryStoreState:
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
        self.added: dict[str, int] = {}  # job id → pages a crawl added
        self.lock = asyncio.Lock()
        self.stats: dict[datetime, Totals] = {}  # outcome totals by 5-minute slot
        self.tenant_stats: dict[tuple[str, datetime], Totals] = {}  # the same, per tenant
        # what each process put (StatsWriter.put), by (source, tenant, slot), as stored fields
        self.put_fields: dict[tuple[str, str, datetime], dict[str, int]] = {}
        self.reachable = True  # tests switch it off to play an outage
        self.workers: dict[str, WorkerView] = {}
        self.kept_pages: dict[str, KeptPage] = {}  # the page cache's index (PageCache)
        self.page_cache_reads = 0

    async def ping(self) -> None:
        if not self.reachable:
            raise ConnectionError("the memory store is switched off")

    def counts(self, job_id: str) -> dict[TaskStatus, int]:
        counts = dict.fromkeys(TaskStatus, 0)
        for batch in self.batches.get(job_id, {}).values():
            for item in batch.items:
                counts[item.status] += 1
        return counts

    def batch_to_add(self, batch: BatchRecord, max_new: int | None) -> BatchRecord | None:
        """What ``add_batch`` would store now: the batch with its pages not found before, as
        many as the crawl's budget has left; None when it would store nothing (the job is
        gone, the batch is already there, no page is new or the budget is spent)."""
        if batch.job_id not in self.jobs or batch.id in self.batches[batch.job_id]:
            return None
        known = self.results[batch.job_id]
        fresh = [item for item in batch.items if item.task_id not in known]
        if max_new is not None:
            fresh = fresh[: max(0, max_new - self.added.get(batch.job_id, 0))]
        return replace(batch, items=tuple(fresh), lease_until=None) if fresh else None

    def mark_found(self, batch: BatchRecord) -> None:
        """A crawl's pages are results (``queued``) once found: found at most once a job."""
        for item in batch.items:
            self.results[batch.job_id][item.task_id] = batch_transitions.result_record(
                batch, item, TaskOutcome(TaskStatus.QUEUED), batch.created_at
            )

    def add_stats(self, tenant: str, at: datetime, totals: Totals) -> None:
        """``totals`` added to the slot holding ``at``: every tenant's and ``tenant``'s."""
        if totals.empty:
            return
        slot = slot_of(at)
        self.stats[slot] = self.stats.get(slot, Totals()) + totals
        self.tenant_stats[(tenant, slot)] = self.tenant_stats.get((tenant, slot), Totals()) + totals

    def put_stats(self, source: str, tenant: str, slot: datetime, totals: Totals) -> None:
        """``source``'s totals of ``tenant``'s slot set: what they add to the last put."""
        fields = totals.to_fields()
        before = self.put_fields.get((source, tenant, slot), {})
        added = {name: fields.get(name, 0) - before.get(name, 0) for name in fields | before}
        self.put_fields[(source, tenant, slot)] = fields
        self.add_stats(tenant, slot, Totals.from_fields(added))

    def write(self, applied: Applied, now: datetime) -> Handle:
        """The commit: the batch, its results, kept pages, tally and handoffs (its outcomes'
        statistics are the process's to put: ``Settled.stats``)."""
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
        return Handle(batch.job_id, batch.id)

    def settled(self, applied: Applied, now: datetime) -> Settled:
        handle = self.write(applied, now)
        job_id = applied.batch.job_id
        job = self.jobs[job_id]
        open_left = any(b.open_items for b in self.batches[job_id].values())
        return Settled(
            handle,
            applied.finished,
            job.status is JobStatus.CANCELLED,
            bool(applied.finished) and not open_left,
            stats=applied.stats,
            tenant=applied.batch.tenant,
            batch_closed=not applied.batch.open_items,
        )
