"""The task results port: what became of each task (results, the processing lane's handoffs)
and of each message that could never be processed."""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime
from typing import Protocol

from scrapejobs_shared.domain.records import Handoff, TaskRecord
from scrapejobs_shared.ports.page import Page


class TaskResults(Protocol):
    """Task results, handoffs and rejected messages."""

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

    async def handoffs(self, job_id: str, task_ids: Sequence[str]) -> dict[str, Handoff]:
        """What the fetch lane handed the processing lane for these tasks (those it has)."""
