"""The Firestore adapter's guarantees, on the real emulator."""

from __future__ import annotations

import asyncio
import uuid
from datetime import UTC, datetime, timedelta

import pytest

from scrapejobs_shared.domain.jobspec import JobSpec
from scrapejobs_shared.domain.records import JobRecord, TaskOutcome, TaskRecord, task_id_for
from scrapejobs_shared.domain.statuses import JobStatus, TaskStatus
from scrapejobs_shared.ports.job_store import ClaimState

pytestmark = pytest.mark.emulators


async def _job(store, tasks: int = 3) -> tuple[JobRecord, list[TaskRecord]]:
    now = datetime.now(UTC)
    job = JobRecord(
        uuid.uuid4().hex, JobStatus.QUEUED, JobSpec(), now, now, now + timedelta(days=1)
    )
    records = [
        TaskRecord(
            job.id,
            task_id_for(job.id, str(i)),
            f"http://a.example/{i}",
            TaskStatus.QUEUED,
            now,
            now,
            job.expire_at,
            index=i,
        )
        for i in range(tasks)
    ]
    await store.create_job(job, records)
    return job, records


async def test_concurrent_claims_have_one_winner(store) -> None:
    job, [task, *_] = await _job(store)
    now = datetime.now(UTC)
    claims = await asyncio.gather(
        *(store.claim_task(job.id, task.id, now, now + timedelta(seconds=30)) for _ in range(6))
    )
    states = sorted(c.state for c in claims)
    assert states.count(ClaimState.CLAIMED) == 1 and states.count(ClaimState.BUSY) == 5
    winner = next(c for c in claims if c.state is ClaimState.CLAIMED)
    assert winner.task.attempts == 1 and winner.job_status is JobStatus.QUEUED


async def test_finish_is_compare_and_set(store) -> None:
    job, [task, *_] = await _job(store)
    now = datetime.now(UTC)
    await store.claim_task(job.id, task.id, now, now + timedelta(seconds=30))
    ok = TaskOutcome(TaskStatus.SUCCEEDED, http_status=200, data={"a": 1})
    assert await store.finish_task(job.id, task.id, ok, now)
    assert not await store.finish_task(job.id, task.id, TaskOutcome(TaskStatus.FAILED), now)
    stored = await store.get_task(job.id, task.id)
    assert stored.status is TaskStatus.SUCCEEDED and stored.data == {"a": 1}
    assert (await store.claim_task(job.id, task.id, now, now)).state is ClaimState.DONE


async def test_counts_and_open_tasks(store) -> None:
    job, tasks = await _job(store, 4)
    now = datetime.now(UTC)
    for task, status in zip(tasks, [TaskStatus.SUCCEEDED, TaskStatus.FAILED], strict=False):
        await store.finish_task(job.id, task.id, TaskOutcome(status), now)
    counts = await store.count_tasks(job.id)
    assert counts[TaskStatus.QUEUED] == 2 and counts[TaskStatus.SUCCEEDED] == 1
    assert sum(counts.values()) == 4 and await store.has_open_tasks(job.id)
    for task in tasks[2:]:
        await store.finish_task(job.id, task.id, TaskOutcome(TaskStatus.CANCELLED), now)
    assert not await store.has_open_tasks(job.id)


async def test_job_status_never_moves_backwards(store) -> None:
    job, _ = await _job(store, 1)
    now = datetime.now(UTC)
    assert await store.set_job_status(job.id, JobStatus.RUNNING, now)
    assert not await store.set_job_status(job.id, JobStatus.QUEUED, now)
    assert await store.set_job_status(job.id, JobStatus.CANCELLED, now)
    assert not await store.set_job_status(job.id, JobStatus.COMPLETED, now)
    assert (await store.get_job(job.id)).status is JobStatus.CANCELLED


async def test_add_tasks_creates_each_id_once(store) -> None:
    job, tasks = await _job(store, 1)
    fresh = tasks[0].with_changes(id=task_id_for(job.id, "new"))
    created = await asyncio.gather(store.add_tasks([fresh, tasks[0]]), store.add_tasks([fresh]))
    assert sum(len(c) for c in created) == 1
    assert sum((await store.count_tasks(job.id)).values()) == 2


async def test_results_pages_cover_every_task_once(store) -> None:
    job, tasks = await _job(store, 7)
    seen, token = [], None
    while True:
        page = await store.list_tasks(job.id, 3, token)
        seen += [t.id for t in page.items]
        token = page.next_page_token
        if token is None:
            break
    assert sorted(seen) == sorted(t.id for t in tasks) and len(seen) == 7


async def test_claim_token_finishes_without_a_transaction_until_someone_else_writes(store) -> None:
    job, [first, second, *_] = await _job(store)
    now = datetime.now(UTC)
    claim = await store.claim_task(job.id, first.id, now, now + timedelta(seconds=30))
    assert claim.task.claim_token is not None
    done = TaskOutcome(TaskStatus.SUCCEEDED, data={"x": 1})
    assert await store.finish_task(job.id, first.id, done, now, claim=claim.task)
    # A stale token (the task moved on) falls back to compare-and-set: no double finish.
    assert not await store.finish_task(job.id, first.id, done, now, claim=claim.task)

    claim = await store.claim_task(job.id, second.id, now, now + timedelta(seconds=30))
    dead = TaskOutcome(TaskStatus.DEAD_LETTERED)
    assert await store.finish_task(job.id, second.id, dead, now)  # e.g. the dead-letter path
    late = TaskOutcome(TaskStatus.SUCCEEDED)
    assert not await store.finish_task(job.id, second.id, late, now, claim=claim.task)
    assert (await store.get_task(job.id, second.id)).status is TaskStatus.DEAD_LETTERED
    counts = await store.count_tasks(job.id)
    assert counts[TaskStatus.SUCCEEDED] == 1 and counts[TaskStatus.DEAD_LETTERED] == 1
    assert counts[TaskStatus.RUNNING] == 0 and sum(counts.values()) == 3
