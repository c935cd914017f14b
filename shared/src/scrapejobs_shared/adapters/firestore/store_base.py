"""What the Firestore job and batch stores share: the client, the call deadline, the counters
staged in their commits, document references, and the helpers both use.
The layout of the documents is in job_store.py's docstring."""

from __future__ import annotations

import asyncio
import random
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from datetime import timedelta
from typing import Any, TypeVar

from google.api_core import exceptions as gexc
from google.cloud import firestore

from scrapejobs_shared.adapters.firestore.call_deadline import CallDeadline, reports_outages
from scrapejobs_shared.adapters.firestore.codec import (
    job_from_doc,
    task_to_doc,
)
from scrapejobs_shared.adapters.firestore.counters import ShardedCounters
from scrapejobs_shared.adapters.firestore.task_documents import TaskDocuments
from scrapejobs_shared.domain.records import (
    BatchItem,
    BatchRecord,
    JobRecord,
    TaskRecord,
)
from scrapejobs_shared.domain.statuses import JobStatus, TaskStatus
from scrapejobs_shared.errors import Conflict
from scrapejobs_shared.observability.store_ops import count
from scrapejobs_shared.ports.dependency_unavailable import FIRESTORE, Contended

HANDOFFS = "handoffs"  # what the fetch lane handed the processing lane, by task id
BATCH_LIMIT = 500  # Firestore's maximum writes per commit
# Bytes of documents per commit: Firestore refuses a request over 10 MiB (the emulator over
# 4 MiB), and 10,000 URLs of 2 KB make 20 MB of batch documents.
COMMIT_BYTES = 3 * 1024 * 1024
CLAIM_RETRIES = 5
TRANSACTION_ATTEMPTS = 2  # the library's immediate retries of an aborted transaction, a round
TRANSACTION_ROUNDS = 10  # rounds, a random pause apart (12 reservations at once on one tenant-day
# document exhausted 5 on a loaded CI machine, 12 monitor creates on one tenant 8 rounds of
# pauses that did not grow)
TRANSACTION_PAUSE_S = 0.1  # the first round's longest pause; it doubles each round
TRANSACTION_PAUSE_CAP_S = 2.0
T = TypeVar("T")
REJECTED_RETENTION = timedelta(days=30)
SHARDS_CACHE = 10_000
RESERVED_ID = "__"  # Firestore reserves ids that start and end with it


@dataclass(frozen=True, slots=True)
class ClaimHandle:
    """A claim: the batch as this delivery last wrote it, and that write's update time (the
    precondition of the next blind write; None once something else wrote the batch). A job
    that holds its batch (``in_job``): the job's status as that write left it."""

    batch: BatchRecord
    shard: int
    token: Any
    job_status: JobStatus | None = None  # None: a batch document
    room: int = 0  # bytes the job's document has for a result inside (batch_in_job.room_in)

    @property
    def in_job(self) -> bool:
        return self.job_status is not None


@dataclass(frozen=True, slots=True)
class StoreState:
    """What the store's adapters share (job_store.py composes them): one client, one call
    deadline, one set of write slots, the counters their commits stage, and the counter shards
    of the jobs seen."""

    client: firestore.AsyncClient
    deadline: CallDeadline
    write_slots: asyncio.Semaphore
    counters: ShardedCounters
    shards: dict[str, int]  # counter shards per job id (immutable)

    @classmethod
    def of(
        cls,
        client: firestore.AsyncClient,
        *,
        write_concurrency: int = 8,
        deadline: CallDeadline | None = None,
    ) -> StoreState:
        deadline = deadline or CallDeadline()
        counters = ShardedCounters(client, deadline)
        return cls(client, deadline, asyncio.Semaphore(write_concurrency), counters, {})


@reports_outages
class FirestoreStoreBase:
    """One concept of the store (jobs, batches, claims, recovery queries) over the state the
    others share."""

    def __init__(self, state: StoreState) -> None:
        self._state = state
        self._client = state.client
        self._deadline = state.deadline
        self._jobs = state.client.collection("jobs")
        self._write_slots = state.write_slots
        self._counters = state.counters
        self._shards = state.shards
        self._tasks = TaskDocuments(state.client)

    def _job_ref(self, job_id: str) -> Any:
        return self._jobs.document(job_id)

    @staticmethod
    def _batch_ref(job_ref: Any, batch_id: str) -> Any:
        return job_ref.collection("batches").document(batch_id)

    # ---- jobs ----------------------------------------------------------------------------

    async def _in_transaction(self, transactional: Callable[[Any], Awaitable[T]]) -> T:
        return await in_transaction(self._client, transactional)

    async def get_job(self, job_id: str) -> JobRecord | None:
        if reserved(job_id):
            return None
        count(reads=1)
        snap = await self._job_ref(job_id).get(**self._deadline.call)
        if not snap.exists:
            return None
        job = job_from_doc(job_id, snap.to_dict())
        self._remember_shards(job)
        return job

    def _remember_shards(self, job: JobRecord, shards: int | None = None) -> None:
        """``shards``: 0 for a job that holds its batch (batch_in_job.py)."""
        self._shards[job.id] = job.counter_shards if shards is None else shards
        if len(self._shards) > SHARDS_CACHE:
            self._shards.pop(next(iter(self._shards)))


async def in_transaction(
    client: firestore.AsyncClient, transactional: Callable[[Any], Awaitable[T]]
) -> T:
    """Run a ``firestore.async_transactional`` function. Transactions that read the same
    documents and then write them (two crawl pages finding the same page at once) can hold
    each other's locks until both abort; the library retries at once, keeping each one's
    place in line, and on the emulator they may abort together every time. After
    ``TRANSACTION_ATTEMPTS`` such rounds, a round starts again after a random pause ("full
    jitter": up to a bound that doubles each round), so the contenders spread out and one of
    them goes first. Still aborted after the last round: ``Contended``."""
    for round_ in range(TRANSACTION_ROUNDS):
        try:
            return await transactional(client.transaction(max_attempts=TRANSACTION_ATTEMPTS))
        except ValueError as exc:  # the library's "failed to commit in N attempts"
            if not isinstance(exc.__cause__, gexc.Aborted):
                raise
            if round_ + 1 == TRANSACTION_ROUNDS:
                raise Contended(FIRESTORE) from exc
        await _pause(round_)
    raise AssertionError("unreachable")


class Stale(Conflict):
    """A guarded commit found a document it had read changed (or created) since
    (``guarded_rounds`` reads again; it never reaches a caller)."""


async def commit_guarded(commit: Any, call: dict[str, Any]) -> None:
    """Commit a write guarded by what was read: a guard that fails (``FailedPrecondition``: an
    update time moved) or a create of a document made meanwhile (``AlreadyExists``) raises
    ``Stale``, the exception's cause saying which."""
    try:
        await commit.commit(**call)
    except (gexc.FailedPrecondition, gexc.AlreadyExists) as exc:
        raise Stale from exc


async def guarded_rounds(attempt: Callable[[], Awaitable[T]]) -> T:
    """Run ``attempt``, a read and then a commit guarded by what it read (``last_update_time``,
    or a create for a document that was missing), raising ``Stale`` when the guard fails, until
    it holds. A stale commit fails at once and holds no lock, so of many contenders one
    commits in each round; as transactions, contenders that read one document and then write
    it can hold each other's locks until a timeout, and on the emulator (under load: 12
    creates on one count took up to 48 s) none of them commits. Rounds are ``in_transaction``'s,
    a random pause apart; still stale after the last: ``Contended``."""
    for round_ in range(TRANSACTION_ROUNDS):
        try:
            return await attempt()
        except Stale as exc:
            if round_ + 1 == TRANSACTION_ROUNDS:
                raise Contended(FIRESTORE) from exc
        await _pause(round_)
    raise AssertionError("unreachable")


async def _pause(round_: int) -> None:
    bound = min(TRANSACTION_PAUSE_CAP_S, TRANSACTION_PAUSE_S * 2**round_)
    await asyncio.sleep(random.uniform(0, bound))


def marker(batch: BatchRecord, item: BatchItem) -> dict[str, Any]:
    """A crawl page's task document before it has a result: it marks the page as known."""
    record = TaskRecord(
        job_id=batch.job_id,
        id=item.task_id,
        url=item.url,
        status=TaskStatus.QUEUED,
        created_at=batch.created_at,
        updated_at=batch.created_at,
        expire_at=batch.expire_at,
        index=item.index,
        depth=item.depth,
        batch_id=batch.id,
        replays=item.replays,
    )
    return task_to_doc(record)


def reserved(doc_id: str) -> bool:
    """Ids Firestore refuses (``__...__``, with a slash, empty or too long): never stored."""
    return (
        not doc_id
        or "/" in doc_id
        or len(doc_id) > 256
        or (doc_id.startswith(RESERVED_ID) and doc_id.endswith(RESERVED_ID))
        or doc_id in (".", "..")
    )
