"""The JobStore + BatchStore contract, on the real Firestore emulator and on the in-memory twin
alike: claims, leases, settles, counts, cancel, crawl batches, paging."""

from __future__ import annotations

import asyncio
import random
import uuid
from collections.abc import AsyncIterator
from datetime import UTC, datetime, timedelta

import pytest
from google.cloud import firestore

from scrapejobs_shared.adapters.firestore.job_store import FirestoreJobStore
from scrapejobs_shared.adapters.memory.job_store import MemoryJobStore
from scrapejobs_shared.delivery.batching import plan_batches, shards_for
from scrapejobs_shared.delivery.enqueue import StoreForEnqueue
from scrapejobs_shared.domain.batch_transitions import FinishTask, ReleaseTask
from scrapejobs_shared.domain.jobspec import JobSpec
from scrapejobs_shared.domain.records import (
    BatchItem,
    BatchRecord,
    JobRecord,
    TaskOutcome,
    task_id_for,
)
from scrapejobs_shared.domain.statuses import JobStatus, TaskStatus
from scrapejobs_shared.observability.store_ops import counting
from scrapejobs_shared.ports.job_store import (
    AlreadyDone,
    Busy,
    Claimed,
    JobExists,
    Missing,
    Settled,
)

LEASE = timedelta(seconds=30)
OK = TaskOutcome(TaskStatus.SUCCEEDED, http_status=200, data={"title": "A", "tags": ["x"]})


@pytest.fixture(params=["memory", pytest.param("firestore", marks=pytest.mark.emulators)])
async def store(request: pytest.FixtureRequest) -> AsyncIterator[StoreForEnqueue]:
    if request.param == "memory":
        yield MemoryJobStore()
        return
    stack = request.getfixturevalue("stack")
    client = firestore.AsyncClient(project=stack.config.project_id)
    yield FirestoreJobStore(client)
    client.close()


def now() -> datetime:
    return datetime.now(UTC)


async def a_job(
    store: StoreForEnqueue, tasks: int = 3, batch_size: int = 50, kind: str = "urls"
) -> tuple[JobRecord, list[BatchRecord]]:
    created = now()
    job_id = uuid.uuid4().hex
    items = [
        BatchItem(task_id_for(job_id, str(i)), f"http://a.example/{i}", index=i)
        for i in range(tasks)
    ]
    batches = plan_batches(job_id, items, batch_size, created, created + timedelta(days=1))
    job = JobRecord(
        job_id,
        JobStatus.QUEUED,
        JobSpec(),
        created,
        created,
        created + timedelta(days=1),
        total=tasks,
        kind=kind,
        counter_shards=shards_for(len(batches)),
    )
    await store.create_job(job, batches)
    return job, batches


async def claim(store: StoreForEnqueue, batch: BatchRecord, at: datetime | None = None) -> Claimed:
    at = at or now()
    result = await store.claim_batch(batch.job_id, batch.id, at, at + LEASE)
    assert isinstance(result, Claimed), result
    return result


async def test_a_new_job_counts_every_task_queued(store) -> None:
    job, [batch] = await a_job(store, tasks=3)
    counts = await store.count_tasks(job.id)
    assert counts[TaskStatus.QUEUED] == 3 and sum(counts.values()) == 3
    assert await store.has_open_tasks(job.id)
    assert (await store.list_tasks(job.id, 10, None)).items == []  # no result yet
    assert (await store.get_job(job.id)).status is JobStatus.QUEUED
    with pytest.raises(JobExists):
        await store.create_job(job, [batch])


async def test_a_crawl_shows_its_pages_queued_at_once(store) -> None:
    job, _ = await a_job(store, tasks=2, kind="crawl")
    page = await store.list_tasks(job.id, 10, None)
    assert [t.status for t in page.items] == [TaskStatus.QUEUED] * 2


async def test_concurrent_claims_have_one_winner(store) -> None:
    _, [batch] = await a_job(store)
    at = now()
    claims = await asyncio.gather(
        *(store.claim_batch(batch.job_id, batch.id, at, at + LEASE) for _ in range(6))
    )
    winners = [c for c in claims if isinstance(c, Claimed)]
    assert len(winners) == 1 and all(isinstance(c, Busy) for c in claims if c not in winners)
    [winner] = winners
    assert {i.status for i in winner.batch.items} == {TaskStatus.RUNNING}
    assert {i.attempts for i in winner.batch.items} == {1} and not winner.cancelled
    counts = await store.count_tasks(batch.job_id)
    assert counts[TaskStatus.RUNNING] == 3 and counts[TaskStatus.QUEUED] == 0


async def test_a_lapsed_lease_is_claimed_again_with_one_more_attempt(store) -> None:
    _, [batch] = await a_job(store)
    first = now()
    await claim(store, batch, first)
    busy = await store.claim_batch(batch.job_id, batch.id, first, first + LEASE)
    assert isinstance(busy, Busy) and busy.until >= first + LEASE - timedelta(seconds=1)
    later = first + LEASE + timedelta(seconds=1)
    again = await claim(store, batch, later)
    assert {i.attempts for i in again.batch.items} == {2}
    counts = await store.count_tasks(batch.job_id)
    assert counts[TaskStatus.RUNNING] == 3  # moved once, not twice


async def test_unknown_and_reserved_batches_are_missing(store) -> None:
    job, _ = await a_job(store)
    at = now()
    assert isinstance(await store.claim_batch(job.id, "nope", at, at + LEASE), Missing)
    assert isinstance(await store.claim_batch("__x__", "__y__", at, at + LEASE), Missing)
    assert await store.get_job("__x__") is None


async def test_settle_records_results_and_moves_counts_exactly(store) -> None:
    job, [batch] = await a_job(store, tasks=3)
    claimed = await claim(store, batch)
    [a, b, c] = [i.task_id for i in claimed.batch.items]
    failed = TaskOutcome(TaskStatus.FAILED, http_status=404, error="HTTP 404")
    settled = await store.settle(
        claimed.handle,
        [FinishTask(a, OK), FinishTask(b, failed), ReleaseTask(c, "HTTP 500")],
        now(),
    )
    assert set(settled.finished) == {a, b} and not settled.job_may_be_done
    counts = await store.count_tasks(job.id)
    assert counts[TaskStatus.SUCCEEDED] == 1 and counts[TaskStatus.FAILED] == 1
    assert counts[TaskStatus.RUNNING] == 1 and sum(counts.values()) == 3
    result = await store.get_task(job.id, a)
    assert result is not None and result.status is TaskStatus.SUCCEEDED
    assert result.data == OK.data and result.http_status == 200 and result.attempts == 1
    assert (await store.get_task(job.id, c)) is None  # still open: no result yet

    again = await store.settle(settled.handle, [FinishTask(a, failed)], now())
    assert again.finished == ()  # never moves backwards
    assert (await store.get_task(job.id, a)).status is TaskStatus.SUCCEEDED

    last = await store.settle(again.handle, [FinishTask(c, OK)], now())
    assert last.finished == (c,) and last.job_may_be_done
    assert not await store.has_open_tasks(job.id)
    assert sum((await store.count_tasks(job.id)).values()) == 3


async def test_a_released_task_keeps_its_error_and_a_refund_gives_the_attempt_back(store) -> None:
    _, [batch] = await a_job(store, tasks=2)
    claimed = await claim(store, batch)
    [a, b] = [i.task_id for i in claimed.batch.items]
    changes = [ReleaseTask(a, "HTTP 500"), ReleaseTask(b, "throttled", refund_attempt=True)]
    settled = await store.settle(claimed.handle, changes, now(), lease_until=now())
    again = await claim(store, batch, now() + timedelta(seconds=1))
    attempts = {i.task_id: i.attempts for i in again.batch.items}
    errors = {i.task_id: i.error for i in again.batch.items}
    assert attempts == {a: 2, b: 1} and errors == {a: "HTTP 500", b: "throttled"}
    assert not settled.finished


async def test_an_empty_settle_renews_the_lease(store) -> None:
    _, [batch] = await a_job(store)
    first = now()
    claimed = await claim(store, batch, first)
    renewed_until = first + LEASE + timedelta(seconds=60)
    await store.settle(claimed.handle, [], first, lease_until=renewed_until)
    at = first + LEASE + timedelta(seconds=1)  # the first lease has lapsed, the renewal not
    assert isinstance(await store.claim_batch(batch.job_id, batch.id, at, at + LEASE), Busy)


async def test_a_stale_handle_applies_only_what_is_still_legal(store) -> None:
    job, [batch] = await a_job(store, tasks=2)
    first = now()
    stale = await claim(store, batch, first)
    [a, b] = [i.task_id for i in stale.batch.items]
    later = first + LEASE + timedelta(seconds=1)  # the first delivery looks dead
    fresh = await claim(store, batch, later)
    await store.settle(fresh.handle, [FinishTask(a, OK)], later)

    late = await store.settle(
        stale.handle, [FinishTask(a, TaskOutcome(TaskStatus.FAILED)), FinishTask(b, OK)], later
    )

    assert late.finished == (b,)
    assert (await store.get_task(job.id, a)).status is TaskStatus.SUCCEEDED
    counts = await store.count_tasks(job.id)
    assert counts[TaskStatus.SUCCEEDED] == 2 and sum(counts.values()) == 2


async def test_a_cancel_is_seen_by_later_claims_and_settles(store) -> None:
    job, [first, second] = await a_job(store, tasks=4, batch_size=2)
    running = await claim(store, first)
    assert await store.cancel_job(job.id, now())
    assert (await claim(store, second)).cancelled
    settled = await store.settle(running.handle, [], now())
    assert settled.cancelled
    assert not await store.cancel_job(job.id, now())  # already ended
    assert (await store.get_job(job.id)).status is JobStatus.CANCELLED


async def test_a_completed_job_cannot_be_cancelled(store) -> None:
    job, _ = await a_job(store)
    assert await store.set_job_status(job.id, JobStatus.RUNNING, now())
    assert await store.set_job_status(job.id, JobStatus.COMPLETED, now())
    assert not await store.set_job_status(job.id, JobStatus.RUNNING, now())
    assert not await store.cancel_job(job.id, now())


async def test_jobs_finished_in_a_span(store) -> None:
    ended_at = datetime(2033, 5, 5, tzinfo=UTC) + timedelta(seconds=random.randrange(10**6))
    job, _ = await a_job(store)
    assert await store.set_job_status(job.id, JobStatus.COMPLETED, ended_at)
    around = await store.finished_between(ended_at - timedelta(seconds=1), ended_at + LEASE, 50)
    assert [j.id for j in around] == [job.id] and around[0].finished_at == ended_at
    assert await store.finished_between(ended_at + LEASE, ended_at + 2 * LEASE, 50) == []


async def test_close_batch_dead_letters_open_tasks_with_their_last_error(store) -> None:
    job, [batch] = await a_job(store, tasks=2)
    first = now()
    claimed = await claim(store, batch, first)
    [a, b] = [i.task_id for i in claimed.batch.items]
    await store.settle(claimed.handle, [FinishTask(a, OK), ReleaseTask(b, "HTTP 500")], first)
    dead = TaskOutcome(TaskStatus.DEAD_LETTERED)
    assert isinstance(await store.close_batch(job.id, batch.id, dead, first), Busy)

    closed = await store.close_batch(job.id, batch.id, dead, first + LEASE + timedelta(seconds=1))

    assert isinstance(closed, Settled) and closed.finished == (b,) and closed.job_may_be_done
    result = await store.get_task(job.id, b)
    assert result.status is TaskStatus.DEAD_LETTERED and result.error == "HTTP 500"
    counts = await store.count_tasks(job.id)
    assert counts[TaskStatus.DEAD_LETTERED] == 1 and counts[TaskStatus.SUCCEEDED] == 1
    assert isinstance(await store.claim_batch(job.id, batch.id, now(), now() + LEASE), AlreadyDone)


async def test_crawl_batches_add_each_page_once_within_the_budget(store) -> None:
    job, _ = await a_job(store, tasks=1, kind="crawl")
    created = now()

    def discovered(key: str, pages: list[int]) -> BatchRecord:
        items = tuple(
            BatchItem(task_id_for(job.id, f"crawl:{p}"), f"http://a.example/c/{p}", depth=1)
            for p in pages
        )
        batch_id = task_id_for(job.id, key)
        return BatchRecord(job.id, batch_id, items, created, created + timedelta(days=1))

    first = await store.add_batch(discovered("b1", [1, 2, 3]), max_new=4)
    assert first is not None and len(first.items) == 3
    again = await store.add_batch(discovered("b1", [1, 2, 3]), max_new=4)
    assert again is not None and again.id == first.id and len(again.items) == 3  # idempotent
    second = await store.add_batch(discovered("b2", [2, 3, 4, 5]), max_new=4)
    assert second is not None and [i.url for i in second.items] == ["http://a.example/c/4"]
    assert await store.add_batch(discovered("b3", [5, 6]), max_new=4) is None  # budget spent
    counts = await store.count_tasks(job.id)
    assert counts[TaskStatus.QUEUED] == 1 + 4


async def test_open_batches_page_through_batches_with_open_tasks(store) -> None:
    job, batches = await a_job(store, tasks=5, batch_size=1)
    done = await claim(store, batches[0])
    await store.settle(done.handle, [FinishTask(done.batch.items[0].task_id, OK)], now())
    seen: list[str] = []
    token = None
    while True:
        page = await store.open_batches(job.id, 2, token)
        seen += [b.id for b in page.items]
        token = page.next_page_token
        if token is None:
            break
    assert sorted(seen) == sorted(b.id for b in batches[1:])


async def test_stuck_publishing_and_mark_published(store) -> None:
    job, _ = await a_job(store)
    assert job.id not in {j.id for j in await store.stuck_publishing(now(), 100)}
    publishing = JobRecord(**{**_fields(job), "id": uuid.uuid4().hex, "publishing": True})
    await store.create_job(publishing, [])
    later = now() + timedelta(seconds=1)
    assert publishing.id in {j.id for j in await store.stuck_publishing(later, 100)}
    await store.mark_published([publishing.id], later)
    assert publishing.id not in {j.id for j in await store.stuck_publishing(later, 100)}


async def test_list_jobs_pages_newest_first_and_filters_by_status(store) -> None:
    ids = [(await a_job(store))[0].id for _ in range(3)]
    await store.cancel_job(ids[0], now())
    seen: list[str] = []
    token = None
    while True:  # other tests' jobs share the emulator: page until ours are all seen
        page = await store.list_jobs(None, 50, token)
        seen += [j.id for j in page.items]
        token = page.next_page_token
        if token is None or set(ids) <= set(seen):
            break
    assert [i for i in seen if i in ids] == list(reversed(ids))
    cancelled = await store.list_jobs(JobStatus.CANCELLED, 100, None)
    assert ids[0] in {j.id for j in cancelled.items} and ids[1] not in {
        j.id for j in cancelled.items
    }


async def test_a_batch_costs_one_read_and_about_one_write_per_task(store) -> None:
    if isinstance(store, MemoryJobStore):
        pytest.skip("documents are counted by the Firestore adapter")
    _, [batch] = await a_job(store, tasks=50)
    with counting() as ops:
        claimed = await claim(store, batch)
        changes = [FinishTask(i.task_id, OK) for i in claimed.batch.items]
        await store.settle(claimed.handle, changes, now(), lease_until=now())
    assert ops.reads == 1
    # results + (batch + counter shard) x 2 commits + the outcome-stats shard of the settle
    assert ops.writes == 50 + 5


def _fields(job: JobRecord) -> dict[str, object]:
    return {name: getattr(job, name) for name in JobRecord.__dataclass_fields__}


async def test_a_finished_task_is_never_released_again(store) -> None:
    _, [batch] = await a_job(store, tasks=2)
    first = now()
    claimed = await claim(store, batch, first)
    a = claimed.batch.items[0].task_id
    settled = await store.settle(claimed.handle, [FinishTask(a, OK)], first)
    await store.settle(settled.handle, [ReleaseTask(a, "late", refund_attempt=True)], first)
    again = await claim(store, batch, first + LEASE + timedelta(seconds=1))
    finished = next(i for i in again.batch.items if i.task_id == a)
    assert finished.status is TaskStatus.SUCCEEDED
    assert finished.attempts == 1 and finished.error is None


async def test_replay_reopens_dead_letters_once_and_a_finished_job_runs_again(store) -> None:
    job, [batch] = await a_job(store, tasks=2)
    first = now()
    claimed = await claim(store, batch, first)
    [a, b] = [i.task_id for i in claimed.batch.items]
    await store.settle(claimed.handle, [FinishTask(a, OK), ReleaseTask(b, "HTTP 500")], first)
    dead = TaskOutcome(TaskStatus.DEAD_LETTERED)
    await store.close_batch(job.id, batch.id, dead, first + LEASE + timedelta(seconds=1))
    assert await store.set_job_status(job.id, JobStatus.COMPLETED, now())
    letters = await store.tasks_with_status(TaskStatus.DEAD_LETTERED, job.id, None, 10, None)
    assert [t.id for t in letters.items] == [b] and letters.items[0].batch_id == batch.id
    assert letters.items[0].error == "HTTP 500"

    statuses = frozenset({TaskStatus.DEAD_LETTERED})
    reopened = await store.reopen(job.id, batch.id, [a, b], statuses, now())

    assert reopened is not None
    item = next(i for i in reopened.items if i.task_id == b)
    assert (item.status, item.attempts, item.replays) == (TaskStatus.QUEUED, 0, 1)
    assert next(i for i in reopened.items if i.task_id == a).status is TaskStatus.SUCCEEDED
    counts = await store.count_tasks(job.id)
    assert counts[TaskStatus.QUEUED] == 1 and counts[TaskStatus.DEAD_LETTERED] == 0
    assert (await store.get_job(job.id)).status is JobStatus.RUNNING
    assert await store.reopen(job.id, batch.id, [b], statuses, now()) is None  # once
    again = await claim(store, batch, now() + LEASE * 3)
    assert [i.task_id for i in again.batch.open_items] == [b]


async def test_dead_letters_of_every_job_page_newest_first_and_filter_by_host(store) -> None:
    dead = TaskOutcome(TaskStatus.DEAD_LETTERED, error="HTTP 500")
    ids: list[str] = []
    for _ in range(3):
        _, [batch] = await a_job(store, tasks=1)
        at = now()
        claimed = await claim(store, batch, at)
        await store.settle(claimed.handle, [FinishTask(claimed.batch.items[0].task_id, dead)], at)
        ids.append(claimed.batch.items[0].task_id)
    seen: list[str] = []
    token = None
    while True:  # other tests' dead letters share the emulator: page until ours are all seen
        page = await store.tasks_with_status(TaskStatus.DEAD_LETTERED, None, None, 50, token)
        seen += [t.id for t in page.items]
        token = page.next_page_token
        if token is None or set(ids) <= set(seen):
            break
    assert [i for i in seen if i in ids] == list(reversed(ids))
    other = await store.tasks_with_status(
        TaskStatus.DEAD_LETTERED, None, "http~nowhere.example~80", 10, None
    )
    assert other.items == []
    mine = await store.tasks_with_status(
        TaskStatus.DEAD_LETTERED, None, "http~a.example~80", 500, None
    )
    assert set(ids) <= {t.id for t in mine.items}
