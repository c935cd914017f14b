"""What the store holds: jobs, their batches of tasks, and each task's result.

A task is one URL of a job. Tasks travel and are claimed in **batches** (one Pub/Sub message,
one batch record holding its tasks' states and attempts); each task's terminal outcome is
written as its own result record (``TaskRecord``), in the same commit that settles it in its
batch.
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass, field, replace
from datetime import datetime
from typing import Any

from scrapejobs_shared.domain.jobspec import JobSpec
from scrapejobs_shared.domain.metered import NOTHING, Metered
from scrapejobs_shared.domain.model_usage import ModelUsage
from scrapejobs_shared.domain.page_validators import PageValidators
from scrapejobs_shared.domain.statuses import FETCH_STATUSES, JobStatus, TaskStatus
from scrapejobs_shared.domain.tenancy import DEFAULT_TENANT


def task_id_for(job_id: str, key: str) -> str:
    """A stable, non-sequential task id (sequential ids hot-spot Firestore)."""
    return hashlib.sha256(f"{job_id}\x00{key}".encode()).hexdigest()[:24]


@dataclass(frozen=True, slots=True)
class JobRecord:
    id: str
    status: JobStatus
    spec: JobSpec
    created_at: datetime
    updated_at: datetime
    expire_at: datetime
    labels: dict[str, str] = field(default_factory=dict)
    total: int = 0  # tasks created at submission (crawl jobs grow beyond it)
    kind: str = "urls"
    trigger: str | None = None  # scheduler trigger key, when submitted by a schedule
    publishing: bool = False  # tasks written, messages not yet all published
    counter_shards: int = 1  # how many counter documents hold the job's task counts
    started_at: datetime | None = None  # when a worker first took one of its batches
    finished_at: datetime | None = None  # when it completed or was cancelled
    ai_usage: ModelUsage | None = None  # its ai stage's usage (read with its counts)
    uncharged: int = 0  # its tasks that ran without a charge (domain/job_tally.py; ditto)
    metered: Metered = NOTHING  # what its tasks used beside their fetches (domain/job_tally.py)
    tenant: str = DEFAULT_TENANT  # the team it belongs to (domain/tenancy.py)
    # the request body's digest, for a job an Idempotency-Key derived (a retry with the key
    # and another body is told apart by it)
    key_fingerprint: str | None = None


@dataclass(frozen=True, slots=True)
class TaskRecord:
    job_id: str
    id: str
    url: str
    status: TaskStatus
    created_at: datetime
    updated_at: datetime
    expire_at: datetime
    index: int = 0
    attempts: int = 0
    http_status: int | None = None
    data: dict[str, Any] | None = None
    error: str | None = None
    fetched_at: datetime | None = None
    elapsed_ms: int | None = None
    rendered_ms: int | None = None  # the page was rendered in a browser, in this long
    metered: Metered = NOTHING  # what it used beside its fetch (domain/metered.py)
    tls_unverified: bool = False  # its certificate failed verification (verify_tls off)
    depth: int = 0
    truncated_fields: tuple[str, ...] = ()
    field_errors: dict[str, str] | None = None
    batch_id: str | None = None  # the batch the task travels in (None on old records)
    replays: int = 0  # how often it was replayed after it failed or was dead-lettered
    tenant: str | None = None  # a dead letter's job's tenant (listed per tenant); else None
    validators: PageValidators | None = None  # a monitor check's page: what the next asks with

    def with_changes(self, **changes: Any) -> TaskRecord:
        return replace(self, **changes)


@dataclass(frozen=True, slots=True)
class TaskOutcome:
    """The terminal result a worker records for a task."""

    status: TaskStatus
    http_status: int | None = None
    data: dict[str, Any] | None = None
    error: str | None = None
    fetched_at: datetime | None = None
    elapsed_ms: int | None = None
    truncated_fields: tuple[str, ...] = ()
    field_errors: dict[str, str] | None = None
    rendered_ms: int | None = None
    metered: Metered = NOTHING  # what it used beside its fetch (domain/metered.py)
    tls_unverified: bool = False
    validators: PageValidators | None = None  # kept for a monitor check's next conditional fetch
    # the page did not change since the validators its task carried (page_validators.py):
    # succeeded, and no result of its own is written
    unchanged: bool = False


@dataclass(frozen=True, slots=True)
class Handoff:
    """What the fetch lane hands the processing lane for one task: the result so far (its
    fetch and extraction, the stages before the ``ai`` stage applied) and the content the
    model reads. Stored beside the task until the processing lane finishes it."""

    outcome: TaskOutcome  # status SUCCEEDED: what the task would end with, stages so far
    model_input: str  # the page's markdown, text or data (JSON), as the ai stage asks


def kept_error(outcome: TaskOutcome, previous_error: str | None) -> str | None:
    """A dead-lettered task keeps the last error its attempts recorded."""
    if outcome.error is None and outcome.status is TaskStatus.DEAD_LETTERED:
        return previous_error
    return outcome.error


@dataclass(frozen=True, slots=True)
class BatchItem:
    """One task inside a batch: its URL, where it stands, and how often it was attempted."""

    task_id: str
    url: str
    status: TaskStatus = TaskStatus.QUEUED
    attempts: int = 0
    error: str | None = None  # the last transient error, kept for a dead letter
    depth: int = 0  # crawl hops from the start URL
    index: int = 0  # position in the submission
    replays: int = 0  # replays after it failed or was dead-lettered
    validators: PageValidators | None = None  # a monitor check's page: asked conditionally

    def with_changes(self, **changes: Any) -> BatchItem:
        return replace(self, **changes)


@dataclass(frozen=True, slots=True)
class BatchRecord:
    """Up to B tasks of one job delivered as one message and claimed together."""

    job_id: str
    id: str
    items: tuple[BatchItem, ...]
    created_at: datetime
    expire_at: datetime
    lease_until: datetime | None = None  # a delivery is running it until then
    updated_at: datetime | None = None  # last written (claim, results); None: at creation
    lane: str = "normal"  # the priority lane its messages travel in (the job's priority)
    tenant: str = DEFAULT_TENANT  # its job's (the workers count its outcomes for the tenant)
    held: bool = False  # written but not published: its job's window on its host is full
    chained: bool = False  # its host has held batches of the job: finishing it releases one
    # deferred until its pace allows a fetch: written, not published, until then (held_batches)
    wait_until: datetime | None = None
    wait_deferrals: int = 0  # the deferrals its next message carries when it is woken

    @property
    def open_items(self) -> tuple[BatchItem, ...]:
        return tuple(item for item in self.items if not item.status.terminal)

    @property
    def active(self) -> bool:
        """Whether a message of the batch should be in the broker: open tasks, neither held
        back by its job's window nor waiting for its time (ports/held_batches.py)."""
        return bool(self.open_items) and not self.held and self.wait_until is None

    @property
    def fetch_items(self) -> tuple[BatchItem, ...]:
        """The open tasks the fetch lane runs (not those handed to the processing lane)."""
        return tuple(item for item in self.items if item.status in FETCH_STATUSES)

    @property
    def processing_items(self) -> tuple[BatchItem, ...]:
        """The tasks waiting for the processing lane (their later stages)."""
        return tuple(item for item in self.items if item.status is TaskStatus.PROCESSING)
