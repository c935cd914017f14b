"""The one-document job (ports/job_store.py: a job ``create_jobs`` writes with one batch holds
it): created, claimed with its claim token and completed by its last settle, on the memory
twin and on the Firestore emulator; what it costs on Firestore; and the reconcile's queries
(stalled and moving work) over both layouts. test_job_store.py runs every other case of the
contract in both layouts too."""

from __future__ import annotations

import uuid
from collections.abc import AsyncIterator
from dataclasses import replace
from datetime import UTC, datetime, timedelta

import pytest
from google.cloud import firestore

from scrapejobs_shared.adapters.firestore.job_store import FirestoreJobStore
from scrapejobs_shared.adapters.memory.job_store import MemoryJobStore
from scrapejobs_shared.delivery.batching import plan_batches
from scrapejobs_shared.domain.batch_transitions import FinishTask
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
from scrapejobs_shared.ports.batch_store import BatchClaim
from scrapejobs_shared.ports.job_store import (
    Busy,
    Claimed,
    ClaimResult,
    JobStore,
    JointClaim,
    Settled,
)
from scrapejobs_shared.ports.page import PageRequest
from scrapejobs_shared.ports.recovery_queries import TaskScope

LEASE = timedelta(seconds=40)
Store = JobStore


@pytest.fixture(params=["memory", pytest.param("firestore", marks=pytest.mark.emulators)])
async def store(request: pytest.FixtureRequest) -> AsyncIterator[Store]:
    if request.param == "memory":
        yield MemoryJobStore()
        return
    stack = request.getfixturevalue("stack")
    client = firestore.AsyncClient(project=stack.config.project_id)
    yield FirestoreJobStore(client)
    client.close()


def planned(tasks: int = 1, created: datetime | None = None) -> tuple[JobRecord, BatchRecord]:
    created = created or datetime.now(UTC)
    expire = created + timedelta(days=1)
    job_id = uuid.uuid4().hex
    items = [
        BatchItem(task_id_for(job_id, str(i)), f"http://a.example/p/{i}", index=i)
        for i in range(tasks)
    ]
    [batch] = plan_batches(job_id, items, 100, created, expire)
    job = JobRecord(
        job_id, JobStatus.QUEUED, JobSpec(), created, created, expire, total=tasks, publishing=True
    )
    return job, batch


async def created(store: Store, tasks: int = 1) -> tuple[JobRecord, BatchRecord, str]:
    job, batch = planned(tasks)
    tokens = await store.create_jobs([(job, [batch])])
    return job, batch, tokens[job.id]


async def first_claimed(store: Store) -> tuple[JobRecord, BatchRecord, Claimed, datetime]:
    """A one-URL job, created and claimed with its token."""
    job, batch, token = await created(store)
    now = datetime.now(UTC)
    claim = await store.claim_batch(
        BatchClaim(job.id, batch.id, now, now + LEASE, claim_token=token)
    )
    assert isinstance(claim, Claimed)
    return job, batch, claim, now


def ok(task_id: str) -> FinishTask:
    return FinishTask(task_id, TaskOutcome(TaskStatus.SUCCEEDED, http_status=200, data={"a": 1}))


async def test_created_claimed_and_completed_in_three_writes_without_a_read(store: Store) -> None:
    """One write creates the job, one claims it (given its token: no read), one settles and
    completes it with its result inside (its outcome statistics are the process's, written about
    once a second: delivery/stats_buffer.py); a status read is one document, and so is its
    result."""
    job, batch, token = await created(store)
    [task_id] = [item.task_id for item in batch.items]
    now = datetime.now(UTC)
    with counting() as ops:
        claim = await store.claim_batch(
            BatchClaim(job.id, batch.id, now, now + LEASE, mark_started=True, claim_token=token)
        )
        assert isinstance(claim, Claimed) and not claim.cancelled
        running = await store.job_with_counts(job.id)
        settled = await store.settle(claim.handle, [ok(task_id)], now, now)
    assert running is not None
    assert running[0].status is JobStatus.RUNNING and running[0].started_at == now
    assert not running[0].publishing  # its claim marks it published
    assert running[1][TaskStatus.RUNNING] == 1
    assert settled.finished == (task_id,) and settled.job_completed and settled.job_may_be_done
    found = await store.job_with_counts(job.id)
    assert found is not None and found[0].status is JobStatus.COMPLETED
    assert found[0].finished_at == now and found[1][TaskStatus.SUCCEEDED] == 1
    result = await store.get_task(job.id, task_id)
    assert result is not None and result.status is TaskStatus.SUCCEEDED and result.data == {"a": 1}
    if isinstance(store, FirestoreJobStore):
        # claim 1 write; status read 1; settle: the job with its result
        assert (ops.reads, ops.writes) == (1, 2)
        cold = FirestoreJobStore(store._client)  # type: ignore[attr-defined]  # another process
        for reader in (store, cold):
            page = await reader.list_tasks(job.id, 10, None)
            assert [(t.id, t.status) for t in page.items] == [(task_id, TaskStatus.SUCCEEDED)]
            assert await reader.get_task(job.id, task_id) == page.items[0]


async def test_a_duplicate_delivery_s_claim_finds_the_lease_and_counts_nothing(
    store: Store,
) -> None:
    """Two claims with the same token (a duplicate push): one wins, the other reads and finds
    the batch leased; a stale settle counts its task once."""
    job, batch, token = await created(store)
    [task_id] = [item.task_id for item in batch.items]
    now = datetime.now(UTC)
    first = await store.claim_batch(
        BatchClaim(job.id, batch.id, now, now + LEASE, claim_token=token)
    )
    second = await store.claim_batch(
        BatchClaim(job.id, batch.id, now, now + LEASE, claim_token=token)
    )
    assert isinstance(first, Claimed) and isinstance(second, Busy)
    done = await store.settle(first.handle, [ok(task_id)], now, now)
    again: Settled = await store.settle(first.handle, [ok(task_id)], now, now)
    assert done.finished == (task_id,) and done.job_completed
    assert again.finished == () and not again.job_completed
    found = await store.job_with_counts(job.id)
    assert found is not None and found[1][TaskStatus.SUCCEEDED] == 1 and sum(found[1].values()) == 1


async def test_a_cancel_before_the_claim_outdates_the_token(store: Store) -> None:
    """A cancel written after the creation: the claim's token no longer guards its write, it
    reads, and sees the cancel; its settle leaves the job cancelled."""
    job, batch, token = await created(store, 2)
    now = datetime.now(UTC)
    assert await store.cancel_job(job.id, now)
    claim = await store.claim_batch(
        BatchClaim(job.id, batch.id, now, now + LEASE, claim_token=token)
    )
    assert isinstance(claim, Claimed) and claim.cancelled
    cancelled = [
        FinishTask(item.task_id, TaskOutcome(TaskStatus.CANCELLED)) for item in batch.items
    ]
    settled = await store.settle(claim.handle, cancelled, now, now)
    assert settled.cancelled and not settled.job_completed
    stored = await store.get_job(job.id)
    assert stored is not None and stored.status is JobStatus.CANCELLED


async def test_a_job_s_own_batch_hears_of_a_cancel_by_a_read(store: Store) -> None:
    """A job that holds its batch: the ask reads the job's document, and writes nothing (the
    claim's settle after it is still the claim's)."""
    job, batch, claim, now = await first_claimed(store)
    [task_id] = [item.task_id for item in batch.items]
    with counting() as ops:
        assert not await store.cancel_heard(claim.handle)
    assert ops.writes == 0
    settled = await store.settle(claim.handle, [], now, now + LEASE)  # still its claim's
    assert not settled.cancelled
    assert await store.cancel_job(job.id, now)
    assert await store.cancel_heard(settled.handle)
    cancelled = FinishTask(task_id, TaskOutcome(TaskStatus.CANCELLED))
    last = await store.settle(settled.handle, [cancelled], now, now)
    assert last.cancelled and last.finished == (task_id,)


async def test_a_cancel_racing_the_settle_keeps_the_job_cancelled(store: Store) -> None:
    """A cancel between the claim and the settle: the settle's guarded write fails, the
    settle is decided again, records the result, and the job stays cancelled."""
    job, batch, claim, now = await first_claimed(store)
    [task_id] = [item.task_id for item in batch.items]
    assert await store.cancel_job(job.id, now)
    settled = await store.settle(claim.handle, [ok(task_id)], now, now)
    assert settled.cancelled and not settled.job_completed and settled.finished == (task_id,)
    stored = await store.get_job(job.id)
    assert stored is not None and stored.status is JobStatus.CANCELLED


async def test_a_replay_runs_the_completed_job_again(store: Store) -> None:
    """Replaying a failed task of a completed job: the job runs again, and its next settle
    completes it again."""
    job, batch, token = await created(store)
    [task_id] = [item.task_id for item in batch.items]
    now = datetime.now(UTC)
    claim = await store.claim_batch(
        BatchClaim(job.id, batch.id, now, now + LEASE, claim_token=token)
    )
    assert isinstance(claim, Claimed)
    failed = FinishTask(task_id, TaskOutcome(TaskStatus.FAILED, error="http_500"))
    assert (await store.settle(claim.handle, [failed], now, now)).job_completed
    reopened = await store.reopen(job.id, batch.id, [task_id], frozenset({TaskStatus.FAILED}), now)
    assert reopened is not None and reopened.open_items
    stored = await store.get_job(job.id)
    assert stored is not None and stored.status is JobStatus.RUNNING
    assert await store.has_open_tasks(job.id)
    later = now + timedelta(seconds=1)
    again = await store.claim_batch(
        BatchClaim(job.id, batch.id, later, later + LEASE, claim_token=token)
    )
    assert isinstance(again, Claimed)  # the token is stale: the claim read
    assert (await store.settle(again.handle, [ok(task_id)], later, later)).job_completed
    found = await store.job_with_counts(job.id)
    assert found is not None and found[0].status is JobStatus.COMPLETED
    assert found[1][TaskStatus.SUCCEEDED] == 1 and sum(found[1].values()) == 1


async def test_a_dead_letter_closes_it_and_the_completion_check_ends_it(store: Store) -> None:
    """``close_batch`` (a dead letter) of an unclaimed one-document job ends its task; the
    completion check (no open task) completes the job."""
    job, batch, _ = await created(store)
    now = datetime.now(UTC)
    closed = await store.close_batch(
        job.id, batch.id, TaskOutcome(TaskStatus.DEAD_LETTERED, error="x"), now
    )
    assert isinstance(closed, Settled) and closed.job_may_be_done
    assert not await store.has_open_tasks(job.id)
    assert await store.set_job_status(job.id, JobStatus.COMPLETED, now)
    page = await store.tasks_with_status(
        TaskStatus.DEAD_LETTERED, TaskScope(job.id), PageRequest(10)
    )
    assert [task.id for task in page.items] == [batch.items[0].task_id]
    await store.delete_job(job.id)
    assert (
        await store.get_job(job.id) is None
        and await store.get_task(job.id, page.items[0].id) is None
    )


async def test_unclaimed_ones_are_stuck_publishing_and_stalled_until_claimed(
    store: Store,
) -> None:
    """The recovery queries see a one-document job as any job of one batch: stuck publishing
    and stalled while unclaimed (its open batch listed), neither once claimed and written;
    whether work moved counts it."""
    t0 = datetime.now(UTC) - timedelta(minutes=10)
    job, batch = planned(1, created=t0)
    tokens = await store.create_jobs([(job, [batch])])
    cutoff = t0 + timedelta(minutes=1)
    assert job.id in {j.id for j in await store.stuck_publishing(cutoff, 1000)}
    stalled = await store.stalled_batches(cutoff, datetime.now(UTC), 1000)
    assert (job.id, batch.id) in {(b.job_id, b.id) for b in stalled}
    assert [b.id for b in (await store.open_batches(job.id, 10, None)).items] == [batch.id]
    assert not await store.progressed_since(cutoff, datetime.now(UTC), job.id)

    now = datetime.now(UTC)
    claim = await store.claim_batch(
        BatchClaim(job.id, batch.id, now, now + LEASE, claim_token=tokens[job.id])
    )
    assert isinstance(claim, Claimed)
    assert job.id not in {j.id for j in await store.stuck_publishing(cutoff, 1000)}
    assert await store.progressed_since(cutoff, now + timedelta(seconds=1), job.id)
    assert await store.progressed_since(cutoff, now + timedelta(seconds=1))
    stalled = await store.stalled_batches(cutoff, now, 1000)
    assert job.id not in {b.job_id for b in stalled}


async def test_a_replayed_failure_that_succeeds_leaves_one_result(store: Store) -> None:
    """A failure is a task document (listed by status); replayed, the task succeeds with its
    result inside the job: the failure's document is gone, so every reader finds one result."""
    job, batch, claim, now = await first_claimed(store)
    [task_id] = [item.task_id for item in batch.items]
    failed = FinishTask(task_id, TaskOutcome(TaskStatus.FAILED, error="http_500"))
    await store.settle(claim.handle, [failed], now, now)
    listed = await store.tasks_with_status(TaskStatus.FAILED, TaskScope(job.id), PageRequest(10))
    assert [task.id for task in listed.items] == [task_id]
    assert await store.reopen(job.id, batch.id, [task_id], frozenset({TaskStatus.FAILED}), now)
    later = now + timedelta(seconds=1)
    again = await store.claim_batch(BatchClaim(job.id, batch.id, later, later + LEASE))
    assert isinstance(again, Claimed)
    assert (await store.settle(again.handle, [ok(task_id)], later, later)).job_completed
    readers: list[Store] = [store]
    if isinstance(store, FirestoreJobStore):
        readers.append(FirestoreJobStore(store._client))  # type: ignore[attr-defined]
    for reader in readers:
        page = await reader.list_tasks(job.id, 10, None)
        assert [(t.id, t.status, t.replays) for t in page.items] == [
            (task_id, TaskStatus.SUCCEEDED, 1)
        ]
        found = await reader.get_task(job.id, task_id)
        assert found is not None and found.status is TaskStatus.SUCCEEDED
        listed = await reader.tasks_with_status(
            TaskStatus.FAILED, TaskScope(job.id), PageRequest(10)
        )
        assert listed.items == []


async def test_a_large_result_is_a_task_document(store: Store) -> None:
    """A result too large to keep inside the job's document (which also holds its spec) is
    written as a task document, and read back whole."""
    job, batch, claim, now = await first_claimed(store)
    [task_id] = [item.task_id for item in batch.items]
    big = {"markdown": "word " * 80_000}  # 400 kB
    done = FinishTask(task_id, TaskOutcome(TaskStatus.SUCCEEDED, http_status=200, data=big))
    with counting() as ops:
        assert (await store.settle(claim.handle, [done], now, now)).job_completed
    if isinstance(store, FirestoreJobStore):
        assert ops.writes == 2  # the job, the result's task document
    page = await store.list_tasks(job.id, 10, None)
    assert [task.data for task in page.items] == [big]


async def test_a_job_document_without_room_keeps_its_result_apart(store: Store) -> None:
    """A job whose document is already large (labels, a long spec) has no room for its
    result (what it may still gain set aside): a small result is a task document too, and
    reads back."""
    job, batch = planned(1)
    job = replace(job, labels={f"k{n}": "v" * 1000 for n in range(980)})  # ~985 kB
    token = (await store.create_jobs([(job, [batch])]))[job.id]
    [task_id] = [item.task_id for item in batch.items]
    now = datetime.now(UTC)
    claim = await store.claim_batch(
        BatchClaim(job.id, batch.id, now, now + LEASE, claim_token=token)
    )
    assert isinstance(claim, Claimed)
    with counting() as ops:
        assert (await store.settle(claim.handle, [ok(task_id)], now, now)).job_completed
    if isinstance(store, FirestoreJobStore):
        assert ops.writes == 2  # the job, the result's task document
    page = await store.list_tasks(job.id, 10, None)
    assert [(task.id, task.data) for task in page.items] == [(task_id, {"a": 1})]


async def bundle(store: Store, jobs: int = 3) -> list[tuple[JobRecord, BatchRecord, JointClaim]]:
    """``jobs`` one-URL jobs created in one call (a coalesced bundle), with their claims."""
    plans = [planned() for _ in range(jobs)]
    tokens = await store.create_jobs([(job, [batch]) for job, batch in plans])
    return [(job, batch, JointClaim(job.id, batch.id, tokens[job.id])) for job, batch in plans]


async def finish(store: Store, batch: BatchRecord, claim: ClaimResult, now: datetime) -> Settled:
    assert isinstance(claim, Claimed)
    return await store.settle(claim.handle, [ok(item.task_id) for item in batch.items], now, now)


async def test_a_bundle_is_claimed_in_one_commit(store: Store) -> None:
    """The claims of a bundle's jobs: one write each in one commit, no read; each job then
    settles and completes as a job claimed alone does, its result inside."""
    jobs = await bundle(store)
    now = datetime.now(UTC)
    with counting() as claiming:
        claims = await store.claim_together([c for _, _, c in jobs], now, now + LEASE)
    assert all(isinstance(c, Claimed) and not c.cancelled for c in claims)
    settled = [
        await finish(store, batch, c, now) for (_, batch, _), c in zip(jobs, claims, strict=True)
    ]
    assert all(s.job_completed and len(s.finished) == 1 for s in settled)
    for job, batch, _ in jobs:
        found = await store.job_with_counts(job.id)
        assert found is not None and found[0].status is JobStatus.COMPLETED
        assert found[0].started_at == now and found[1][TaskStatus.SUCCEEDED] == 1
        [task] = (await store.list_tasks(job.id, 10, None)).items
        assert task.id == batch.items[0].task_id and task.data == {"a": 1}
    if isinstance(store, FirestoreJobStore):
        assert (claiming.reads, claiming.writes) == (0, len(jobs))


async def test_a_duplicate_of_a_bundle_finds_its_jobs_leased(store: Store) -> None:
    jobs = await bundle(store)
    now = datetime.now(UTC)
    first = await store.claim_together([c for _, _, c in jobs], now, now + LEASE)
    again = await store.claim_together([c for _, _, c in jobs], now, now + LEASE)
    assert all(isinstance(c, Claimed) for c in first) and all(isinstance(c, Busy) for c in again)


async def test_a_job_cancelled_before_the_bundle_s_claim_is_claimed_cancelled(
    store: Store,
) -> None:
    """One job written since its token: the joint commit fails as a whole and each is claimed
    alone; the cancelled one says so, the others run; its settle keeps it cancelled."""
    jobs = await bundle(store)
    now = datetime.now(UTC)
    assert await store.cancel_job(jobs[1][0].id, now)
    claims = await store.claim_together([c for _, _, c in jobs], now, now + LEASE)
    assert all(isinstance(c, Claimed) for c in claims)
    assert [c.cancelled for c in claims if isinstance(c, Claimed)] == [False, True, False]
    settled = [
        await finish(store, batch, c, now) for (_, batch, _), c in zip(jobs, claims, strict=True)
    ]
    assert [s.job_completed for s in settled] == [True, False, True]
    statuses = [(await store.get_job(job.id)) for job, _, _ in jobs]
    assert [j.status if j else None for j in statuses] == [
        JobStatus.COMPLETED,
        JobStatus.CANCELLED,
        JobStatus.COMPLETED,
    ]
