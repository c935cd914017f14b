"""Which Firestore documents each port call writes, and in how many commits: the Firestore
adapters' layouts (their module docstrings), said once for the limits model, by hand. The job
store's is held to the adapter by tests/contract/test_firestore_layout_contract.py (the same
calls on the emulator move the documents it says), the host gate's and the quota ledger's by
tests/contract/test_gate_and_ledger_layout_contract.py.

A ``Write`` gives a call's commits (each a list of document paths) from its arguments, or,
with ``after``, from the twin's answer (the adapter writes only what the answer says: a slot
it won); ``kind`` is how the adapter commits (``transaction``: retried in rounds, as a
transaction is, or a commit guarded by what it read: store_base.guarded_rounds;
``commit``: a blind or batched write; ``guarded``: a write guarded by an update time, whose
loss the caller takes as a refusal); ``lost`` undoes the twin's answer when a guarded write
lost."""

from __future__ import annotations

import random
import zlib
from collections.abc import Awaitable, Callable, Mapping, Sequence
from dataclasses import dataclass
from datetime import date, datetime
from typing import Any

from scrapejobs_shared.adapters.firestore import crawl_budget
from scrapejobs_shared.adapters.firestore.task_documents import TASKS, document_id
from scrapejobs_shared.adapters.memory.job_store import MemoryJobStore
from scrapejobs_shared.adapters.memory.store_state import Handle
from scrapejobs_shared.delivery.batching import batch_group
from scrapejobs_shared.domain import batch_transitions
from scrapejobs_shared.domain.outcome_stats import slot_of
from scrapejobs_shared.domain.records import BatchRecord, JobRecord
from scrapejobs_shared.politeness import host_gate as gate
from scrapejobs_shared.politeness.pace_grid import PaceGrid
from scrapejobs_shared.ports.job_store import holds_its_batch

Commits = list[list[str]]
BATCH_LIMIT = 500
STATS_SHARDS = 16  # OutcomeStats' DEFAULT_SHARDS (the usage meter's)
_RNG = random.Random(5)


async def _kept(twin: Any, answer: Any) -> Any:
    return answer


@dataclass(frozen=True)
class Write:
    commits: Callable[[tuple[Any, ...], dict[str, Any], Any], Commits]
    kind: str = "commit"
    after: bool = False
    lost: Callable[[Any, Any], Awaitable[Any]] = _kept


Layout = Mapping[str, Write]
Reads = Mapping[str, Callable[[tuple[Any, ...], dict[str, Any]], int]]  # documents a call reads


def chunked(paths: Sequence[str], size: int = BATCH_LIMIT) -> Commits:
    return [list(paths[n : n + size]) for n in range(0, len(paths), size)]


def job_path(job_id: str) -> str:
    return f"jobs/{job_id}"


def stats_path(at: datetime, tenant: str) -> str:
    """A random shard of the tenant's 5-minute slot (outcome_stats.OutcomeStats.stage: the
    usage meter's searches)."""
    return f"stats_slots/{slot_of(at):%Y%m%d%H%M}-{tenant}-{_RNG.randrange(STATS_SHARDS):02d}"


def counter_path(job: JobRecord | None, job_id: str, batch_id: str) -> str:
    """The job's counter shard that counts a batch added without a budget (batch_store's
    ``_counted_on``: its id's)."""
    shards = job.counter_shards if job is not None else 1
    return f"jobs/{job_id}/counters/{zlib.crc32(batch_id.encode()) % max(1, shards)}"


class CrawlBudgets:
    """A crawl's budget shards as ``crawl_budget.take`` fills them: the pages each has given,
    by job. A batch's take is kept by its id, so a refused add that is tried again takes what
    it took (a batch never tried again leaves its pages counted here: the model's error)."""

    def __init__(self) -> None:
        self._added: dict[tuple[str, int], int] = {}
        self._taken: dict[tuple[str, str], tuple[int, ...]] = {}

    def take(self, batch: BatchRecord, max_new: int, shards: int) -> tuple[int, ...]:
        """The shards that give ``batch`` its pages, its id's own first."""
        key = (batch.job_id, batch.id)
        if key not in self._taken:
            wanted, taken = len(batch.items), []
            for shard in crawl_budget.scan_order(batch.id, shards):
                if wanted <= 0:
                    break
                added = self._added.get((batch.job_id, shard), 0)
                pages = min(wanted, crawl_budget.allowance(max_new, shards, shard) - added)
                if pages > 0:
                    self._added[(batch.job_id, shard)] = added + pages
                    taken.append(shard)
                    wanted -= pages
            self._taken[key] = tuple(taken)
        return self._taken[key]


Args = tuple[Any, ...]
Kwargs = dict[str, Any]


class StoreLayout:
    """JobStore on Firestore (job_store.py's docstring): a job that holds its batch is one
    document; otherwise the batch, its tasks' results and its counter shard, with the worker's
    report in the same commit. A process's outcome statistics are its own documents, each
    put whole (outcome_stats.FirestoreStatsWriter)."""

    def __init__(self, store: MemoryJobStore) -> None:
        self._store = store
        # the counter shard of each batch a job was created with: its place among them
        # (job_store._creation_writes); of a batch a crawl found: its first budget shard's
        self._created_shards: dict[tuple[str, str], int] = {}
        self._budgets = CrawlBudgets()

    def layout(self) -> Layout:
        return {
            "create_job": Write(self.create_job),
            "create_jobs": Write(self.create_jobs),
            "claim_batch": Write(self.claim, "transaction"),
            "claim_together": Write(self.claim_together),
            "settle": Write(self.settle),
            "close_batch": Write(self.close, "transaction"),
            "set_job_status": Write(self.job_write, "transaction"),
            "cancel_job": Write(self.job_write, "transaction"),
            "mark_published": Write(self.jobs_write),
            "add_batch": Write(self.add_batch, "transaction"),
            "report": Write(self.report),
            "meter": Write(self.meter),
            "put": Write(self.put),
        }

    def reads(self) -> Reads:
        """Documents each call reads, as the adapter counts them (store_ops), roughly: a
        claim reads its batch (none for a job that holds it, its claim token in hand), a
        status read the job and its counter shards."""

        def shards(job_id: str) -> int:
            job = self._store.jobs.get(job_id)
            return job.counter_shards if job is not None else 1

        return {
            "get_job": lambda args, kwargs: 1,
            "job_with_counts": lambda args, kwargs: 1 + shards(args[0]),
            "count_tasks": lambda args, kwargs: shards(args[0]),
            "has_open_tasks": lambda args, kwargs: shards(args[0]),
            "get_task": lambda args, kwargs: 1,
            "claim_batch": lambda args, kwargs: 0 if self._holds(args[0].job_id) else 1,
            "cancel_heard": lambda args, kwargs: 1,
            "close_batch": lambda args, kwargs: 1,
            "set_job_status": lambda args, kwargs: 1,
            "cancel_job": lambda args, kwargs: 1 + shards(args[0]),
            "add_batch": lambda args, kwargs: 3 + len(args[0].items),
        }

    def _holds(self, job_id: str) -> bool:
        return job_id in self._store.held_jobs

    def _batch_docs(self, job_id: str, batch_id: str) -> list[str]:
        if self._holds(job_id):
            return [job_path(job_id)]
        return [f"jobs/{job_id}/batches/{batch_id}", self._counter(job_id, batch_id)]

    def _counter(self, job_id: str, batch_id: str) -> str:
        shard = self._created_shards.get((job_id, batch_id))
        if shard is None:
            return counter_path(self._store.jobs.get(job_id), job_id, batch_id)
        return f"jobs/{job_id}/counters/{shard}"

    def _created(self, job: JobRecord, batches: Sequence[BatchRecord]) -> list[str]:
        """A new job's batch documents, its counter shards that count them (and a crawl's
        page markers)."""
        shards = max(1, job.counter_shards)
        docs: list[str] = []
        for n, batch in enumerate(batches):
            self._created_shards[(job.id, batch.id)] = n % shards
            docs.append(f"jobs/{job.id}/batches/{batch.id}")
            if job.kind == "crawl":
                docs += [_result(job.id, item.task_id) for item in batch.items]
        counted = sorted({n % shards for n in range(len(batches))})
        return docs + [f"jobs/{job.id}/counters/{n}" for n in counted]

    def _tenant_of(self, job_id: str) -> str:
        job = self._store.jobs.get(job_id)
        return job.tenant if job is not None else "default"

    def create_job(self, args: Args, kwargs: Kwargs, _: Any) -> Commits:
        job: JobRecord = args[0]
        batches: Sequence[BatchRecord] = args[1] if len(args) > 1 else kwargs["batches"]
        return chunked([job_path(job.id), *self._created(job, batches)])

    def create_jobs(self, args: Args, kwargs: Kwargs, _: Any) -> Commits:
        docs: list[str] = []
        for job, batches in args[0]:
            docs.append(job_path(job.id))
            if not holds_its_batch(job, batches):
                docs += self._created(job, batches)
        return [docs]  # one commit: all or none (at most MAX_COALESCED_WRITES)

    def claim(self, args: Args, kwargs: Kwargs, _: Any) -> Commits:
        """The batch's documents; none when the claim finds it done, or leased (``Busy``: a
        deferring batch keeps its lease a moment past its last write)."""
        claim = args[0]
        batch = self._store.batches.get(claim.job_id, {}).get(claim.batch_id)
        if batch is not None and (
            not batch.open_items
            or (batch.lease_until is not None and batch.lease_until > claim.now)
        ):
            return []
        return [self._batch_docs(claim.job_id, claim.batch_id)]

    def claim_together(self, args: Args, kwargs: Kwargs, _: Any) -> Commits:
        return [[job_path(claim.job_id) for claim in args[0]]]

    def settle(self, args: Args, kwargs: Kwargs, _: Any) -> Commits:
        handle: Handle = args[0]
        changes = args[1]
        beat = kwargs.get("beat") or (args[4] if len(args) > 4 else None)
        docs = self._batch_docs(handle.job_id, handle.batch_id)
        if not self._holds(handle.job_id):
            docs += [_result(handle.job_id, change.task_id) for change in changes]
        if beat is not None:
            docs.append(f"workers/{beat.worker_id}")
        return [docs]

    def close(self, args: Args, kwargs: Kwargs, _: Any) -> Commits:
        """An unleased batch's close: its document and counter shard, and the results of the
        tasks it ends (none while a lease runs: ``Busy``)."""
        job_id, batch_id, outcome, now = args[:4]
        statuses = kwargs.get("statuses", args[4] if len(args) > 4 else None)
        spent_at = kwargs.get("spent_at", args[5] if len(args) > 5 else None)
        batch = self._store.batches.get(job_id, {}).get(batch_id)
        if batch is None or (batch.lease_until is not None and batch.lease_until > now):
            return []
        docs = self._batch_docs(job_id, batch_id)
        if not self._holds(job_id):
            applied = batch_transitions.close(batch, outcome, now, statuses, spent_at)
            docs += [_result(job_id, record.id) for record in applied.results]
        return [docs]

    def job_write(self, args: Args, kwargs: Kwargs, _: Any) -> Commits:
        return [[job_path(args[0])]]

    def jobs_write(self, args: Args, kwargs: Kwargs, _: Any) -> Commits:
        return chunked([job_path(job_id) for job_id in args[0]])

    def add_batch(self, args: Args, kwargs: Kwargs, _: Any) -> Commits:
        """The batch, its new pages' markers, its counter shard and, for a crawl's budget, the
        budget shards it takes its pages from (crawl_budget.py: its id's, the next ones once
        that one is spent); the first of those is its counter shard. Nothing when the adapter
        commits nothing: the batch is there already, or no page of it is new, or the budget is
        spent (most of a crawl's pages past its ``max_pages``: each was charged a batch and ten
        markers before)."""
        requested: BatchRecord = args[0]
        max_new = kwargs.get("max_new", args[1] if len(args) > 1 else None)
        batch = self._store.batch_to_add(requested, max_new)
        if batch is None:
            return []
        job_id = batch.job_id
        job = self._store.jobs.get(job_id)
        docs = [f"jobs/{job_id}/batches/{batch.id}"]
        docs += [_result(job_id, item.task_id) for item in batch.items]
        if max_new is not None:
            shards = max(1, job.counter_shards if job is not None else 1)
            taken = self._budgets.take(batch, max_new, shards)
            docs += [f"jobs/{job_id}/crawl/{crawl_budget.shard_id(n)}" for n in taken]
            if taken:
                self._created_shards[(job_id, batch.id)] = taken[0]
        return [[*docs, self._counter(job_id, batch.id)]]

    def report(self, args: Args, kwargs: Kwargs, _: Any) -> Commits:
        return [[f"workers/{args[0].worker_id}"]]

    def meter(self, args: Args, kwargs: Kwargs, _: Any) -> Commits:
        return [[stats_path(args[2], args[0])]]

    def put(self, args: Args, kwargs: Kwargs, _: Any) -> Commits:
        source, entries = args[0], args[1]
        return chunked([f"stats_slots/{source}~{e.slot:%Y%m%dT%H%M}~{e.tenant}" for e in entries])


class HostGateLayout:
    """HostGate on Firestore (host_gate.py): a permit writes its slot document, and with a
    request spacing also the host's document (``next_at``), or for a fast pace the grid's
    shard that owns the permit's instant (pace_grid.py), each guarded by the update time read;
    a warm slot's instant writes only its shard; a release frees the slot; a failure
    increments the host document."""

    def layout(self) -> Layout:
        return {
            "acquire": Write(self.acquired, "guarded", after=True, lost=self.refused),
            "take_instant": Write(self.instant, "guarded", after=True, lost=self.lost_instant),
            "release": Write(self.released, "guarded"),
            "record_success": Write(self.success),
            "record_failure": Write(self.host),
            "hold": Write(self.host, "transaction"),
        }

    def reads(self) -> Reads:
        """A permit reads the host document and a random slot (a fast pace its instant's
        shard too); an instant its shard; signals the host document."""

        def acquire(args: Args, kwargs: Kwargs) -> int:
            return 3 if PaceGrid.of(args[1]) else 2

        return {
            "acquire": acquire,
            "take_instant": lambda args, kwargs: 1,
            "signals": lambda args, kwargs: 1,
            "close_breaker": lambda args, kwargs: 1,
        }

    def acquired(self, args: Args, kwargs: Kwargs, answer: Any) -> Commits:
        if not isinstance(answer, gate.Permit):
            return []
        host, limits = args[0], args[1]
        writes = [[f"hosts/{host}/slots/{answer.slot}"]]
        if (grid := PaceGrid.of(limits)) and answer.starts_at is not None:
            writes.append([f"hosts/{host}/pace/{grid.shard_at(answer.starts_at)}"])
        elif limits.min_interval_s:
            writes.append([f"hosts/{host}"])
        return writes

    @staticmethod
    async def refused(twin: Any, answer: gate.Permit) -> gate.Throttle:
        await twin.release(answer)
        return gate.Throttle(0.05, "rate")

    def instant(self, args: Args, kwargs: Kwargs, answer: Any) -> Commits:
        grid = PaceGrid.of(args[1])
        if grid is None or not isinstance(answer, datetime):
            return []
        return [[f"hosts/{args[0]}/pace/{grid.shard_at(answer)}"]]

    @staticmethod
    async def lost_instant(twin: Any, answer: Any) -> gate.Throttle:
        return gate.Throttle(0.05, "rate")

    def released(self, args: Args, kwargs: Kwargs, _: Any) -> Commits:
        permit: gate.Permit = args[0]
        return [[f"hosts/{permit.host}/slots/{permit.slot}"]]

    def host(self, args: Args, kwargs: Kwargs, _: Any) -> Commits:
        return [[f"hosts/{args[0]}"]]

    def success(self, args: Args, kwargs: Kwargs, _: Any) -> Commits:
        permit: gate.Permit = args[0]
        return [[f"hosts/{permit.host}"]] if permit.failures else []


class HeldBatchesLayout:
    """HeldBatches on Firestore (held_batches.py): a release and a wake write each batch they
    move (a write guarded by the update time read with it), a wait its batch (the job's
    document, for a job that holds its batch); each reads what its queries return (a crawl's
    window: the host's active batches, then the held)."""

    def __init__(self, store: MemoryJobStore) -> None:
        self._store = store

    def layout(self) -> Layout:
        return {
            "release": Write(self.moved, after=True),
            "release_to_window": Write(self.moved, after=True),
            "wake": Write(self.moved, after=True),
            "wait": Write(self.waited),
        }

    def reads(self) -> Reads:
        return {
            "release": lambda args, kwargs: max(1, args[3]),
            "release_to_window": lambda args, kwargs: 1 + args[2],
            "wake": lambda args, kwargs: 1,
            "stalled_holds": self.stalled_reads,
            "overdue": lambda args, kwargs: 1,
        }

    def stalled_reads(self, args: Args, kwargs: Kwargs) -> int:
        """The reconcile's look for stalled chains: its query returns the held batches last
        written before the cutoff (``limit`` at most; one read when none), then it reads one
        active batch of each of their chains. It charged ``limit`` a look before, 0.48 reads
        a page of the lost pushes' (``make scale``), whose jobs hold nothing."""
        updated_before, limit = args[0], args[1]
        held = [
            (job_id, batch_group(batch))
            for job_id, batches in self._store.batches.items()
            for batch in batches.values()
            if batch.held and (batch.updated_at or batch.created_at) < updated_before
        ][:limit]
        return max(1, len(held)) + len(set(held))

    def _path(self, batch: BatchRecord) -> str:
        if batch.job_id in self._store.held_jobs:
            return job_path(batch.job_id)
        return f"jobs/{batch.job_id}/batches/{batch.id}"

    def moved(self, args: Args, kwargs: Kwargs, answer: Any) -> Commits:
        return [[self._path(batch)] for batch in answer]

    def waited(self, args: Args, kwargs: Kwargs, _: Any) -> Commits:
        return [[self._path(args[0])]]


class QuotaLedgerLayout:
    """QuotaLedger on Firestore (quota_ledger.py): a reservation and a release are one
    transaction on the tenant's day document (``quota_days/{tenant}~{day}``) and the
    reservations' own documents under it."""

    def layout(self) -> Layout:
        return {
            "reserve": Write(self.reserve, "transaction"),
            "release": Write(self.release, "transaction"),
        }

    def reads(self) -> Reads:
        """A reservation reads the day and its reservations; a release the day and its own."""
        return {
            "reserve": lambda args, kwargs: 1 + len(args[2]),
            "release": lambda args, kwargs: 2,
            "reserved": lambda args, kwargs: 1,
        }

    @staticmethod
    def day(tenant: str, day: date) -> str:
        return f"quota_days/{tenant}~{day.isoformat()}"

    def reserve(self, args: Args, kwargs: Kwargs, _: Any) -> Commits:
        tenant, day, wanted = args[0], args[1], args[2]
        day_doc = self.day(tenant, day)
        return [[day_doc, *(f"{day_doc}/reservations/{r.key}" for r in wanted)]]

    def release(self, args: Args, kwargs: Kwargs, _: Any) -> Commits:
        tenant, day, key = args[0], args[1], args[2]
        day_doc = self.day(tenant, day)
        return [[day_doc, f"{day_doc}/reservations/{key}"]]


def _result(job_id: str, task_id: str) -> str:
    """A task's result document (task_documents.py: at the root, keyed by a hash)."""
    return f"{TASKS}/{document_id(job_id, task_id)}"
