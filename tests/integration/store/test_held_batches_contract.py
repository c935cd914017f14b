"""The HeldBatches contract on the memory twin and the Firestore emulator: a job's batches
beyond its window on a host are stored held, released one at a time in order, never twice,
and a chain with no active batch of its host is found stalled."""

from __future__ import annotations

import asyncio
import uuid
from collections.abc import AsyncIterator
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta

import pytest
from google.cloud import firestore

from scrapejobs_shared.adapters.firestore.held_batches import FirestoreHeldBatches
from scrapejobs_shared.adapters.firestore.job_store import FirestoreJobStore
from scrapejobs_shared.adapters.memory.held_batches import MemoryHeldBatches
from scrapejobs_shared.adapters.memory.job_store import MemoryJobStore
from scrapejobs_shared.delivery.batching import batch_group, hold_beyond, plan_batches, shards_for
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
from scrapejobs_shared.ports.held_batches import HeldBatches
from scrapejobs_shared.ports.job_store import Claimed, JobStore


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
    """A job of 12 pages of one host in batches of 2 (6 batches), the first ``window``
    unheld, and 2 pages of another host (a batch of its own)."""
    job_id = uuid.uuid4().hex
    urls = [f"http://a.example/p/{i}" for i in range(12)] + [
        "http://b.example/1",
        "http://b.example/2",
    ]
    items = [BatchItem(task_id_for(job_id, str(i)), url, index=i) for i, url in enumerate(urls)]
    batches = hold_beyond(
        plan_batches(job_id, items, 2, created, created + timedelta(days=1)), window
    )
    job = JobRecord(
        job_id,
        JobStatus.QUEUED,
        JobSpec(),
        created,
        created,
        created + timedelta(days=1),
        total=len(urls),
        counter_shards=shards_for(len(batches)),
    )
    await stores.jobs.create_job(job, batches)
    return job, batches


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


async def test_a_chain_with_no_active_batch_of_its_host_is_stalled(stores: Stores) -> None:
    created = datetime.now(UTC) - timedelta(hours=1)
    job, batches = await held_job(stores, created)
    later = datetime.now(UTC)
    stalled = await stores.held.stalled_holds(later, 1000)
    assert (job.id, batch_group(batches[0])) not in stalled  # its first batches are active
    for batch in batches:
        if not batch.held:  # the unheld batches end (their deliveries finish)
            claim = await stores.jobs.claim_batch(
                job.id, batch.id, later, later + timedelta(seconds=30)
            )
            assert isinstance(claim, Claimed)
            done = TaskOutcome(TaskStatus.SUCCEEDED, http_status=200)
            await stores.jobs.settle(
                claim.handle, [FinishTask(i.task_id, done) for i in batch.items], later
            )
    stalled = await stores.held.stalled_holds(later, 1000)
    assert (job.id, batch_group(batches[0])) in stalled  # nothing will release the rest
    await stores.held.release(job.id, batch_group(batches[0]), later, 1)
    assert (job.id, batch_group(batches[0])) not in await stores.held.stalled_holds(later, 1000)
