"""The HeldBatches contract on the memory twin and the Firestore emulator: a job's batches
beyond its window on a host are stored held, released one at a time in order, never twice,
released until a window of their host is active (a crawl's), and a chain with no active
batch of its host is found stalled."""

from __future__ import annotations

import asyncio
import uuid
from collections.abc import AsyncIterator
from dataclasses import dataclass, replace
from datetime import UTC, datetime, timedelta

import pytest
from google.cloud import firestore

from scrapejobs_shared.adapters.firestore.held_batches import FirestoreHeldBatches
from scrapejobs_shared.adapters.firestore.job_store import FirestoreJobStore
from scrapejobs_shared.adapters.memory.held_batches import MemoryHeldBatches
from scrapejobs_shared.adapters.memory.job_store import MemoryJobStore
from scrapejobs_shared.delivery.batching import batch_group, plan_batches
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
from scrapejobs_shared.ports.batch_store import BatchClaim
from scrapejobs_shared.ports.held_batches import HeldBatches
from scrapejobs_shared.ports.job_store import Claimed, JobStore
from support.held_jobs import job_with_held_batches


@dataclass
class Stores:
    jobs: JobStore
    held: HeldBatches


@pytest.fixture(params=["memory", pytest.param("firestore", marks=pytest.mark.emulators)])
async def stores(request: pytest.FixtureRequest) -> AsyncIterator[Stores]:
    if request.param == "memory":
        memory = MemoryJobStore()
        yield Stores(memory, MemoryHeldBatches(memory))
        return
    stack = request.getfixturevalue("stack")
    client = firestore.AsyncClient(project=stack.config.project_id)
    yield Stores(FirestoreJobStore(client), FirestoreHeldBatches(client))
    client.close()


async def held_job(
    stores: Stores, created: datetime, window: int = 2
) -> tuple[JobRecord, list[BatchRecord]]:
    """``job_with_held_batches``, stored."""
    job, batches = job_with_held_batches(created, window)
    await stores.jobs.create_job(job, batches)
    return job, batches


async def ended(stores: Stores, job_id: str, batch: BatchRecord, now: datetime) -> None:
    """``batch``'s delivery claims it and finishes every task."""
    claim = await stores.jobs.claim_batch(
        BatchClaim(job_id, batch.id, now, now + timedelta(seconds=30))
    )
    assert isinstance(claim, Claimed)
    done = TaskOutcome(TaskStatus.SUCCEEDED, http_status=200)
    await stores.jobs.settle(claim.handle, [FinishTask(i.task_id, done) for i in batch.items], now)


async def test_held_batches_are_released_in_order_one_at_a_time_and_never_twice(
    stores: Stores,
) -> None:
    now = datetime.now(UTC)
    job, batches = await held_job(stores, now)
    a_group = batch_group(batches[0])
    held = [b.id for b in batches if b.held]
    assert len(held) == 4 and all(batch_group(b) == a_group for b in batches if b.held)
    assert not any(b.held for b in batches if batch_group(b) != a_group)  # its own window
    first = await stores.held.release(job.id, a_group, now, 1)
    assert [b.id for b in first] == sorted(held)[:1] and not first[0].held
    assert len(first[0].open_items) == 2
    # releases at once never release one batch twice, and each releases one: a release that
    # loses a batch to another takes the next (a job's window never narrows)
    racing = await asyncio.gather(*(stores.held.release(job.id, a_group, now, 1) for _ in range(3)))
    raced = [b.id for batch_list in racing for b in batch_list]
    assert sorted(raced) == sorted(held)[1:]
    assert await stores.held.release(job.id, None, now, 10) == []  # each released exactly once
    assert await stores.held.release(job.id, None, now, 10) == []
    reopened = await stores.jobs.open_batches(job.id, 100, None)
    assert not any(b.held for b in reopened.items)


async def test_held_batches_are_released_until_the_window_of_their_host_is_active(
    stores: Stores,
) -> None:
    """A crawl's window, kept by count: released while fewer than the window of the host's
    batches are active, the other host's batches apart; none when the window is full."""
    now = datetime.now(UTC)
    job, batches = await held_job(stores, now)  # 2 of host a active, 4 held; b's active
    a_group = batch_group(batches[0])
    held = sorted(b.id for b in batches if b.held)
    assert await stores.held.release_to_window(job.id, a_group, 2, now) == []  # full
    more = await stores.held.release_to_window(job.id, a_group, 3, now)
    assert [b.id for b in more] == held[:1] and not more[0].held
    b_group = batch_group(batches[-1])
    assert await stores.held.release_to_window(job.id, b_group, 5, now) == []  # none held
    for batch in batches[:2]:  # two of host a's batches end
        await ended(stores, job.id, batch, now)
    refilled = await stores.held.release_to_window(job.id, a_group, 3, now)
    assert [b.id for b in refilled] == held[1:3]
    assert await stores.held.release_to_window(job.id, a_group, 3, now) == []


async def test_a_chain_with_no_active_batch_of_its_host_is_stalled(stores: Stores) -> None:
    created = datetime.now(UTC) - timedelta(hours=1)
    job, batches = await held_job(stores, created)
    later = datetime.now(UTC)
    stalled = await stores.held.stalled_holds(later, 1000)
    assert (job.id, batch_group(batches[0])) not in stalled  # its first batches are active
    for batch in batches:
        if not batch.held:  # the unheld batches end (their deliveries finish)
            await ended(stores, job.id, batch, later)
    stalled = await stores.held.stalled_holds(later, 1000)
    assert (job.id, batch_group(batches[0])) in stalled  # nothing will release the rest
    await stores.held.release(job.id, batch_group(batches[0]), later, 1)
    assert (job.id, batch_group(batches[0])) not in await stores.held.stalled_holds(later, 1000)


async def test_a_deferred_batch_waits_unpublished_until_woken_once(stores: Stores) -> None:
    """A batch deferred until a time waits: not active (the reconcile of lost messages leaves
    it alone), apart from the window's hold (a chain never releases it), overdue only past its
    time; racing wakes wake it once, with the deferrals it kept, active again."""
    now = datetime.now(UTC)
    job, batches = await held_job(stores, now)
    waiting, other = batches[0], batches[1]
    until = now + timedelta(seconds=100)
    assert await stores.held.wait(waiting, until, 3, now)
    assert await stores.held.wait(other, until + timedelta(seconds=5), 1, now)
    later = now + timedelta(hours=1)
    lost = {b.id for b in await stores.jobs.stalled_batches(later, later, 1000)}
    assert waiting.id not in lost and other.id not in lost
    released = await stores.held.release(job.id, batch_group(waiting), now, 10)
    assert {b.id for b in released} == {b.id for b in batches if b.held}
    assert (job.id, waiting.id) not in await stores.held.overdue(until, 1000)
    assert (job.id, waiting.id) in await stores.held.overdue(until + timedelta(seconds=1), 1000)

    racing = await asyncio.gather(*(stores.held.wake(job.id, waiting.id, now) for _ in range(3)))
    [woken] = [b for found in racing for b in found]
    assert woken.id == waiting.id and woken.wait_until is None and woken.wait_deferrals == 3
    assert woken.active and len(woken.open_items) == 2
    assert (job.id, waiting.id) not in await stores.held.overdue(later, 1000)
    assert waiting.id in {b.id for b in await stores.jobs.stalled_batches(later, later, 1000)}
    # a job's every waiting batch at once (a cancel), then none
    assert [b.id for b in await stores.held.wake(job.id, None, now)] == [other.id]
    assert await stores.held.wake(job.id, None, now) == []


async def test_a_batch_its_job_s_document_holds_waits_the_same_way(stores: Stores) -> None:
    now = datetime.now(UTC)
    job_id = uuid.uuid4().hex
    items = [BatchItem(task_id_for(job_id, str(n)), f"http://a.example/{n}") for n in range(2)]
    [batch] = plan_batches(job_id, items, 2, now, now + timedelta(days=1))
    job = JobRecord(job_id, JobStatus.QUEUED, JobSpec(), now, now, now + timedelta(days=1), total=2)
    await stores.jobs.create_jobs([(job, [batch])])
    until = now + timedelta(seconds=50)
    assert await stores.held.wait(batch, until, 2, now)
    later = now + timedelta(hours=1)
    assert batch.id not in {b.id for b in await stores.jobs.stalled_batches(later, later, 1000)}
    assert (job_id, batch.id) not in await stores.held.overdue(until, 1000)
    assert (job_id, batch.id) in await stores.held.overdue(until + timedelta(seconds=1), 1000)
    [woken] = await stores.held.wake(job_id, None, now)
    assert woken.id == batch.id and woken.wait_deferrals == 2 and woken.active
    assert await stores.held.wake(job_id, batch.id, now) == []
    assert (job_id, batch.id) not in await stores.held.overdue(later, 1000)
    # its job goes on: a delivery claims it as before
    claim = await stores.jobs.claim_batch(
        BatchClaim(job_id, batch.id, now, now + timedelta(seconds=30))
    )
    assert isinstance(claim, Claimed)
    assert not await stores.held.wait(replace(batch, id="gone"), until, 1, now)
