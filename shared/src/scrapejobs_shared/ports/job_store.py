"""The job store port: jobs, their tasks' state machine, and the records it returns."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime
from enum import StrEnum
from typing import Generic, Protocol, TypeVar

from scrapejobs_shared.domain.records import JobRecord, TaskOutcome, TaskRecord
from scrapejobs_shared.domain.statuses import JobStatus, TaskStatus


class JobExists(Exception):
    """A job with this id was created before (e.g. a retried scheduler trigger)."""


class ClaimState(StrEnum):
    CLAIMED = "claimed"  # this delivery owns the task now: fetch it
    BUSY = "busy"  # another delivery holds a live lease: retry later
    DONE = "done"  # already terminal: nothing to do
    MISSING = "missing"  # no such task


@dataclass(frozen=True, slots=True)
class Claim:
    state: ClaimState
    task: TaskRecord | None = None
    job_status: JobStatus | None = None  # read together with the task


T = TypeVar("T")


@dataclass(frozen=True, slots=True)
class Finish:
    """The result of ``finish_task``: truthy when this call moved the task."""

    changed: bool
    open_in_shard: int | None = None  # open tasks left beside it in its counter shard

    def __bool__(self) -> bool:
        return self.changed

    @property
    def job_may_be_done(self) -> bool:
        """False when other open tasks are known to remain (no need to read the counts)."""
        return self.changed and not self.open_in_shard


@dataclass(frozen=True, slots=True)
class Page(Generic[T]):
    items: list[T]
    next_page_token: str | None


class JobStore(Protocol):
    async def create_job(self, job: JobRecord, tasks: Sequence[TaskRecord]) -> None:
        """Write the job and all its tasks (batched). Raises if the job id exists."""

    async def add_tasks(
        self, tasks: Sequence[TaskRecord], max_new: int | None = None
    ) -> list[TaskRecord]:
        """Create the tasks (of one job) that do not exist yet, at most ``max_new`` over the
        job's lifetime (a crawl's page budget); returns those actually created."""

    async def get_job(self, job_id: str) -> JobRecord | None: ...

    async def list_jobs(
        self, status: JobStatus | None, page_size: int, page_token: str | None
    ) -> Page[JobRecord]: ...

    async def set_job_status(self, job_id: str, status: JobStatus, now: datetime) -> bool:
        """Move the job forward to ``status``; False if that would move it backwards."""

    async def mark_published(self, job_id: str, now: datetime) -> None:
        """Every message of the job's submission was published."""

    async def stuck_publishing(self, created_before: datetime, limit: int) -> list[JobRecord]:
        """Jobs whose submission stopped between writing the tasks and publishing them."""

    async def queued_tasks(
        self, job_id: str, page_size: int, page_token: str | None
    ) -> Page[TaskRecord]: ...

    async def count_tasks(self, job_id: str) -> dict[TaskStatus, int]: ...

    async def has_open_tasks(self, job_id: str) -> bool: ...

    async def list_tasks(
        self, job_id: str, page_size: int, page_token: str | None
    ) -> Page[TaskRecord]: ...

    async def get_task(self, job_id: str, task_id: str) -> TaskRecord | None: ...

    async def claim_task(
        self, job_id: str, task_id: str, now: datetime, lease_until: datetime
    ) -> Claim:
        """Atomically: queued/expired-running → running with attempts + 1 and a lease.

        The job is read with the task, so a cancel that committed before the claim is
        always seen by the claimer. The claimed task carries a ``claim_token``.
        """

    async def release_task(
        self,
        job_id: str,
        task_id: str,
        error: str,
        now: datetime,
        refund_attempt: bool = False,
        claim: TaskRecord | None = None,
    ) -> None:
        """After a transient failure: keep ``running``, drop the lease, keep the error.
        ``refund_attempt``: the attempt did not count (the host throttled us). ``claim``: the
        claimed task, whose token allows a cheaper write while nothing else changed it."""

    async def finish_task(
        self,
        job_id: str,
        task_id: str,
        outcome: TaskOutcome,
        now: datetime,
        claim: TaskRecord | None = None,
    ) -> Finish:
        """Move a non-terminal task to a terminal outcome; falsy if it was already terminal.
        ``claim`` as for ``release_task``."""

    async def record_rejected_message(
        self, message_id: str, reason: str, payload: bytes, now: datetime
    ) -> None:
        """Keep a message that can never be processed (it is acked after this)."""
