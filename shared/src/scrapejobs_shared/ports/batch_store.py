"""The batch store port: the task state machine over batches (created, claimed, settled,
closed, reopened). Its semantics, with the values it answers: job_store.py."""

from __future__ import annotations

from collections.abc import Collection, Sequence
from dataclasses import dataclass, field
from datetime import datetime
from typing import Protocol

from scrapejobs_shared.domain.batch_transitions import FinishTask, HandOffTask, Lane, ReleaseTask
from scrapejobs_shared.domain.outcome_stats import Totals
from scrapejobs_shared.domain.records import BatchRecord, TaskOutcome
from scrapejobs_shared.domain.statuses import TaskStatus
from scrapejobs_shared.domain.workers import WorkerBeat


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
    # the outcomes this call made terminal, of the batch's tenant, for the process's statistics
    # (delivery/stats_buffer.py; the store writes none), and whether it left the batch closed
    stats: Totals = field(default_factory=Totals)
    tenant: str = ""
    batch_closed: bool = False


@dataclass(frozen=True, slots=True)
class BatchClaim:
    """A delivery's claim of a batch, its lease running from ``now`` to ``lease_until``.

    ``claim_token``: what ``create_jobs`` answered for the job (its message carries it): while
    nothing else wrote the job, the claim needs no read. ``mark_started``: the batch's first
    claim also records the job's start (in the same commit, without a read; the status is left
    alone), which ``job_with_counts`` reports as ``started_at``: for jobs no worker marks
    ``running`` (a job that holds its batch is marked by any claim). ``lane``: whose tasks the
    claim counts an attempt for (batch_transitions.claim); a batch with open tasks of the other
    lane only is ``Claimed`` too (nothing to run)."""

    job_id: str
    batch_id: str
    now: datetime
    lease_until: datetime
    mark_started: bool = False
    lane: Lane = "fetch"
    claim_token: str | None = None


@dataclass(frozen=True, slots=True)
class JointClaim:
    """A claim of a job that holds its batch, by the claim token ``create_jobs`` answered."""

    job_id: str
    batch_id: str
    claim_token: str


def joined(claim: JointClaim, now: datetime, lease_until: datetime) -> BatchClaim:
    """A joint claim as a claim of its own (fetch lane, marking the job started)."""
    return BatchClaim(
        claim.job_id, claim.batch_id, now, lease_until, True, claim_token=claim.claim_token
    )


class BatchStore(Protocol):
    """The task state machine: batches are claimed, their tasks settled."""

    async def add_batch(self, batch: BatchRecord, max_new: int | None = None) -> BatchRecord | None:
        """A crawl's discovered pages: create the batch with those of its tasks the job has
        never had (at most ``max_new`` over the job's lifetime). Idempotent by batch id: when
        the batch exists, it is returned as stored; None when no task was new."""

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

    async def claim_batch(self, claim: BatchClaim) -> ClaimResult:
        """Claim the batch for ``claim.lease_until`` (see ``BatchClaim``)."""

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

    async def cancel_heard(self, handle: object) -> bool:
        """Whether the claimed batch's job was cancelled, by a read, with no write: a batch
        with nothing to record hears of a cancel so between the settles that renew its lease
        (a waiting batch's settle every interval was two writes a second, on its document and
        its counter shard: ``make scale``)."""

    async def claim_together(
        self, claims: Sequence[JointClaim], now: datetime, lease_until: datetime
    ) -> list[ClaimResult]:
        """``claim_batch`` of each in the fetch lane (``mark_started``, by its token): one
        commit while nothing wrote any of their jobs since its token (a bundle's one-URL jobs),
        else each alone. The results are in the claims' order."""

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
