"""The memory twin's ``TaskResults`` (ports/task_results.py): results, handoffs and rejected
messages as the batch store's commits wrote them."""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime

from scrapejobs_shared.adapters.memory.store_state import MemoryStoreState
from scrapejobs_shared.adapters.page_token import decode_token, encode_token
from scrapejobs_shared.domain.records import Handoff, TaskRecord
from scrapejobs_shared.ports.job_store import Page


class MemoryTaskResults:
    def __init__(self, state: MemoryStoreState) -> None:
        self._state = state

    async def list_tasks(
        self, job_id: str, page_size: int, page_token: str | None
    ) -> Page[TaskRecord]:
        ordered = sorted(self._state.results.get(job_id, {}).values(), key=lambda t: t.id)
        if page_token:
            (last_id,) = decode_token(page_token, 1)
            ordered = [task for task in ordered if task.id > last_id]
        page = ordered[:page_size]
        token = encode_token([page[-1].id]) if len(ordered) > page_size else None
        return Page(page, token)

    async def get_task(self, job_id: str, task_id: str) -> TaskRecord | None:
        return self._state.results.get(job_id, {}).get(task_id)

    async def record_rejected_message(
        self, message_id: str, reason: str, payload: bytes, now: datetime
    ) -> None:
        self._state.rejected.append((message_id, reason, payload))

    async def handoffs(self, job_id: str, task_ids: Sequence[str]) -> dict[str, Handoff]:
        kept = self._state.handed_off.get(job_id, {})
        return {task_id: kept[task_id] for task_id in task_ids if task_id in kept}
