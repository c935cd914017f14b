"""The job store port: jobs and their results (``JobStore``), and the task state machine over
batches (``BatchStore``). One adapter implements both; service logic names the one it needs.

Semantics every adapter honours (tests/contract/test_job_store.py runs the same cases on the
memory twin and on the Firestore emulator):

* A batch is claimed as a whole by one lane: the fetch lane's open tasks become ``running``
  with one more attempt (the processing lane's, ``processing``, are left as they are) and the
  batch is leased to the claimer; a batch leased by another delivery is ``Busy``.
* A ``HandOffTask`` moves a ``running`` task to ``processing`` and stores its handoff (read
  back with ``handoffs``) in the same commit.
* A claim returns an opaque ``handle``; ``settle`` with it records task changes. While nothing
  else touched the batch since the handle was issued, the write is a blind guarded commit;
  otherwise the adapter re-reads and applies only what is still legal. A task's status never
  moves backwards and a terminal task is never written again.
* A cancel that committed before a claim or a settle is seen by it (``cancelled``).
* Counts always sum to the number of tasks; ``job_may_be_done`` is true whenever a settle
  may have closed the job's last open task (then ``has_open_tasks`` decides).
* A job ``create_jobs`` writes with one batch (coalesced small jobs, never a crawl) is one
  document in the store: its one batch and its counts inside it. ``create_jobs`` answers a
  claim token for each such job; its first claim, given the token, is one write without a
  read (a token outdated by any other write only costs the read), it marks the job ``running``
  and published, and the settle that closes the job's last task also completes the job in the
  same write (``Settled.job_completed``: its caller announces the end, nothing else moves it).
  Every other call sees such a job as any other job with one batch.
"""

from __future__ import annotations

from collections.abc import Collection, Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Generic, Protocol, TypeVar

from scrapejobs_shared.domain.batch_transitions import FinishTask, HandOffTask, Lane, ReleaseTask
from scrapejobs_shared.domain.records import (
    BatchRecord,
    Handoff,
    JobRecord,
    TaskOutcome,
    TaskRecord,
)
from scrapejobs_shared.domain.statuses import JobStatus, TaskStatus
from scrapejobs_shared.domain.workers import WorkerBeat
from scrapejobs_shared.errors import Conflict

T = TypeVar("T")


MAX_COALESCED_WRITES = 450  # documents of one ``create_jobs`` commit (Firestore: 500 writes)


def coalesced_writes(job: JobRecord, batches: Sequence[BatchRecord]) -> int:
    """Documents a job adds to a ``create_jobs`` commit: one for a job of one batch (it holds
    the batch); else the job, its batches, a counter shard per batch (at most the job's
    shards), and a crawl's page markers."""
    if holds_its_batch(job, batches):
        return 1
    markers = sum(len(b.items) for b in batches) if job.kind == "crawl" else 0
    return 1 + len(batches) + min(len(batches), job.counter_shards) + markers


def holds_its_batch(job: JobRecord, batches: Sequence[BatchRecord]) -> bool:
    """Whether ``create_jobs`` keeps the job and its batch in one document (see above)."""
    return len(batches) == 1 and job.kind != "crawl" and not batches[0].held


class JobExists(Conflict):
    """A job with this id was created before (e.g. a retried scheduler trigger)."""


@dataclass(frozen=True, slots=True)
class Page(Generic[T]):
    items: list[T]
    next_page_token: str | None


@dataclass(frozen=True, slots=True)
class Claimed:
    """This delivery owns the batch now: run its open tasks, then ``settle`` with ``handle``."""

    batch: BatchRecord  # open tasks are ``running`` with their attempt of this delivery counted
    cancelled: bool  # the job was cancelled before the claim: settle every open task cancelled
    handle: object  # opaque to callers


@dataclass(frozen=True, slots=True)
class Busy:
    """Another delivery holds the batch's lease until ``until``."""

    until: datetime


@dataclass(frozen=True, slots=True)
class AlreadyDone:
    """Every task of the batch is terminal: nothing to do."""


@dataclass(frozen=True, slots=True)
class Missing:
    """No such batch (or job)."""


ClaimResult = Claimed | Busy | AlreadyDone | Missing


# a Release keeps the task open, its error kept; a HandOff gives it to the processing lane
TaskChange = FinishTask | ReleaseTask | HandOffTask


@dataclass(frozen=True, slots=True)
class Settled:
    handle: object  # for the next settle of the same claim
    finished: tuple[str, ...]  # task ids this call moved to a terminal status
    cancelled: bool  # the job was cancelled (seen by this write)
    job_may_be_done: bool  # the job may have no open task left: check ``has_open_tasks``
    left_open: tuple[str, ...] = ()  # tasks a close left open (fewer attempts than spent_at)
    # this write completed the job (a job that holds its batch; ``job_may_be_done`` too):
    # its caller announces the end instead of checking for open tasks
    job_completed: bool = False


@dataclass(frozen=True, slots=True)
class JointClaim:
    """A claim of a job that holds its batch, by the claim token ``create_jobs`` answered."""

    job_id: str
    batch_id: str
    claim_token: str


class JobStore(Protocol):
    """Jobs, their counts and their results."""

    async def create_job(self, job: JobRecord, batches: Sequence[BatchRecord]) -> None:
        """Write the job and all its batches. Raises ``JobExists`` if the job id exists."""

    async def create_jobs(
        self, jobs: Sequence[tuple[JobRecord, Sequence[BatchRecord]]]
    ) -> dict[str, str]:
        """Write several small jobs (coalesced submissions), each with its batches, in one
        commit: all or none. Raises ``JobExists``, having written nothing, if any job id
        exists. At most ``MAX_COALESCED_WRITES`` documents (see ``coalesced_writes``).
        Returns the claim token of each job that holds its batch (``holds_its_batch``): its
        message carries it to the worker's claim. Such a job needs no ``mark_published``."""

    async def get_job(self, job_id: str) -> JobRecord | None: ...

    async def list_jobs(
        self,
        status: JobStatus | None,
        page_size: int,
        page_token: str | None,
        tenant: str | None = None,
    ) -> Page[JobRecord]: ...

    async def set_job_status(self, job_id: str, status: JobStatus, now: datetime) -> bool:
        """Move the job forward to ``status``; False if that would move it backwards."""

    async def cancel_job(self, job_id: str, now: datetime) -> bool:
        """Cancel: every claim and settle that commits after this sees it. False if the job
        had already ended (or does not exist)."""

    async def mark_published(self, job_ids: Sequence[str], now: datetime) -> None:
        """Every message of these jobs' submissions was published (one commit)."""

    async def delete_job(self, job_id: str) -> None:
        """Delete the job and every document under it."""

    async def stuck_publishing(self, created_before: datetime, limit: int) -> list[JobRecord]:
        """Jobs whose submission stopped between writing the batches and publishing them."""

    async def finished_between(
        self, since: datetime, until: datetime, limit: int
    ) -> list[JobRecord]:
        """Jobs that ended (completed or cancelled) at or after ``since`` and before
        ``until``, at most ``limit``."""

    async def count_tasks(self, job_id: str) -> dict[TaskStatus, int]: ...

    async def job_with_counts(self, job_id: str) -> tuple[JobRecord, dict[TaskStatus, int]] | None:
        """The job and its task counts (a status query), read together where the store can
        (one round trip once the job's counter shards are known); None if no such job."""

    async def has_open_tasks(self, job_id: str) -> bool: ...

    async def list_tasks(
        self, job_id: str, page_size: int, page_token: str | None
    ) -> Page[TaskRecord]:
        """Task results in task id order (a task appears once it has a result; a crawl's
        discovered pages appear ``queued`` as soon as they are found)."""

    async def get_task(self, job_id: str, task_id: str) -> TaskRecord | None: ...

    async def record_rejected_message(
        self, message_id: str, reason: str, payload: bytes, now: datetime
    ) -> None:
        """Keep a message that can never be processed (it is acked after this)."""


class BatchStore(Protocol):
    """The task state machine: batches are claimed, their tasks settled."""

    async def add_batch(self, batch: BatchRecord, max_new: int | None = None) -> BatchRecord | None:
        """A crawl's discovered pages: create the batch with those of its tasks the job has
        never had (at most ``max_new`` over the job's lifetime). Idempotent by batch id: when
        the batch exists, it is returned as stored; None when no task was new."""

    async def open_batches(
        self, job_id: str, page_size: int, page_token: str | None
    ) -> Page[BatchRecord]:
        """Batches of the job with at least one open task."""

    async def stalled_batches(
        self, updated_before: datetime, now: datetime, limit: int
    ) -> list[BatchRecord]:
        """Batches with open tasks that nothing wrote since ``updated_before`` and that no
        delivery holds (their lease, if any, has lapsed), oldest first, at most ``limit``."""

    async def progressed_since(
        self, since: datetime, until: datetime, job_id: str | None = None
    ) -> bool:
        """Whether a batch (of the job, or of any job) was written after ``since`` and no later
        than ``until`` (a batch stamped in the future by a skewed clock is not progress)."""

    async def tasks_with_status(
        self,
        status: TaskStatus,
        job_id: str | None,
        host: str | None,
        page_size: int,
        page_token: str | None,
        tenant: str | None = None,
    ) -> Page[TaskRecord]:
        """Task results with ``status``, most recently settled first, of one job or of every
        job (an indexed query, never a scan). ``host`` (a host key) and ``tenant`` filter dead
        letters (a dead letter recorded before tasks named their tenant has none)."""

    async def reopen(
        self,
        job_id: str,
        batch_id: str,
        task_ids: Sequence[str],
        statuses: frozenset[TaskStatus],
        now: datetime,
    ) -> BatchRecord | None:
        """Replay: those of ``task_ids`` whose status is in ``statuses`` go back to ``queued``
        with fresh attempts and one more replay, their counts moving in the same commit; a
        completed job goes back to ``running``. Returns the batch when a task was reopened
        (the caller publishes it); None for a cancelled job or when nothing was reopened."""

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
        """``claim_token``: what ``create_jobs`` answered for the job (its message carries
        it): while nothing else wrote the job, the claim needs no read. ``mark_started``: the
        batch's first claim also records the job's start (in the same commit, without a read;
        the status is left alone), which ``job_with_counts`` reports as ``started_at``: for
        jobs no worker marks ``running`` (a job that holds its batch is marked by any claim).
        ``lane``: whose tasks the claim counts an attempt for (batch_transitions.claim); a
        batch with open tasks of the other lane only is ``Claimed`` too (nothing to run)."""

    async def settle(
        self,
        handle: object,
        changes: Sequence[TaskChange],
        now: datetime,
        lease_until: datetime | None = None,
        beat: WorkerBeat | None = None,
    ) -> Settled:
        """Record task changes of a claimed batch in one commit; ``lease_until`` extends the
        lease (an empty ``changes`` just renews it). ``beat``: the worker's report, written
        with the changes (not written when this raises)."""

    async def claim_together(
        self,
        claims: Sequence[JointClaim],
        now: datetime,
        lease_until: datetime,
        *,
        lane: Lane = "fetch",
    ) -> list[ClaimResult]:
        """``claim_batch`` of each (``mark_started``, by its token): one commit while nothing
        wrote any of their jobs since its token (a bundle's one-URL jobs), else each alone.
        The results are in the claims' order."""

    async def close_batch(
        self,
        job_id: str,
        batch_id: str,
        outcome: TaskOutcome,
        now: datetime,
        statuses: Collection[TaskStatus] | None = None,
        spent_at: int | None = None,
    ) -> Settled | Busy | Missing:
        """Settle every open task (of ``statuses``, when given: a lane's dead letters close
        that lane's tasks only) of an unclaimed batch with ``outcome`` (dead letters, lost
        publishes); a dead-lettered task keeps its last error. ``Busy`` while leased. With
        ``spent_at``, only the tasks that spent at least that many attempts close; the others
        stay open and are ``Settled.left_open`` (a dead letter of deliveries that never
        reached a worker)."""

    async def handoffs(self, job_id: str, task_ids: Sequence[str]) -> dict[str, Handoff]:
        """What the fetch lane handed the processing lane for these tasks (those it has)."""
