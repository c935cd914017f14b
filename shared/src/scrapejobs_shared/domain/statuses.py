"""Task and job statuses and the transitions between them (status never moves backwards)."""

from __future__ import annotations

from enum import StrEnum


class TaskStatus(StrEnum):
    QUEUED = "queued"
    RUNNING = "running"
    # fetched and extracted; its later stages (an ``ai`` stage) run on the processing lane
    PROCESSING = "processing"
    SUCCEEDED = "succeeded"
    FAILED = "failed"
    DEAD_LETTERED = "dead_lettered"
    CANCELLED = "cancelled"

    @property
    def terminal(self) -> bool:
        return self in TERMINAL_TASK_STATUSES

    def may_become(self, new: TaskStatus) -> bool:
        """True when moving from ``self`` to ``new`` is allowed (forward only)."""
        if self.terminal:
            return False
        if self is TaskStatus.QUEUED:
            return new is not TaskStatus.QUEUED
        if self is TaskStatus.PROCESSING:
            return new.terminal
        return new.terminal or new in (TaskStatus.RUNNING, TaskStatus.PROCESSING)


TERMINAL_TASK_STATUSES = frozenset(
    {TaskStatus.SUCCEEDED, TaskStatus.FAILED, TaskStatus.DEAD_LETTERED, TaskStatus.CANCELLED}
)
OPEN_TASK_STATUSES = (TaskStatus.QUEUED, TaskStatus.RUNNING, TaskStatus.PROCESSING)
# what the fetch lane runs; the processing lane runs PROCESSING tasks
FETCH_STATUSES = frozenset({TaskStatus.QUEUED, TaskStatus.RUNNING})


class JobStatus(StrEnum):
    QUEUED = "queued"
    RUNNING = "running"
    COMPLETED = "completed"
    CANCELLED = "cancelled"

    @property
    def terminal(self) -> bool:
        return self in (JobStatus.COMPLETED, JobStatus.CANCELLED)

    def may_become(self, new: JobStatus) -> bool:
        order = {JobStatus.QUEUED: 0, JobStatus.RUNNING: 1}
        if self.terminal:
            return False
        return new.terminal or order[new] > order[self]
