"""The job store: one adapter of each backend implements its ports, one concept each: ``Jobs``
(jobs.py), ``TaskResults`` (task_results.py), ``RecoveryQueries`` (recovery_queries.py) and
the task state machine over batches, ``BatchStore`` (batch_store.py, with the values its calls
answer). ``JobStore`` is only their union, the type of that one adapter where a composition root
or a contract suite holds it; service logic names the ports it uses.

Semantics every adapter honours, across its ports (tests/contract/test_job_store.py runs the
same cases on the memory twin and on the Firestore emulator):

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

from collections.abc import Sequence
from typing import Protocol

from scrapejobs_shared.domain.records import BatchRecord, JobRecord
from scrapejobs_shared.errors import Conflict
from scrapejobs_shared.ports.batch_store import (
    AlreadyDone,
    BatchClaim,
    BatchStore,
    Busy,
    Claimed,
    ClaimResult,
    JointClaim,
    Missing,
    Settled,
    TaskChange,
)
from scrapejobs_shared.ports.jobs import Jobs
from scrapejobs_shared.ports.page import Page
from scrapejobs_shared.ports.recovery_queries import RecoveryQueries
from scrapejobs_shared.ports.task_results import TaskResults

__all__ = [
    "MAX_COALESCED_WRITES",
    "AlreadyDone",
    "BatchClaim",
    "BatchStore",
    "Busy",
    "ClaimResult",
    "Claimed",
    "JobExists",
    "JobStore",
    "JointClaim",
    "Missing",
    "Page",
    "Settled",
    "TaskChange",
    "coalesced_writes",
    "holds_its_batch",
]


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


class JobReads(Jobs, TaskResults, Protocol):
    """A job and its tasks' results: what a service that reads a job and answers with its
    results holds (an export, a synchronous scrape, a webhook's event); declares nothing."""


class LaneStore(Jobs, TaskResults, BatchStore, Protocol):
    """What a worker's lane holds: the job, its batches' claims and settles, its tasks'
    results; never the recovery's queries. Declares nothing."""


class JobStore(Jobs, TaskResults, RecoveryQueries, BatchStore, Protocol):
    """The whole store: the union of its ports, declaring nothing of its own. Held only where
    a service's parts are composed; a service holds the ports it calls."""
