"""The limits model's layout (tools/scale: firestore_layout.py) against the Firestore adapter on
the emulator: each store call writes, on the emulator, exactly the documents the layout says it
writes for the same call on the memory twin (the documents created, deleted, or whose update
time moved). A change to an adapter's writes that the model does not follow fails here."""

from __future__ import annotations

import uuid
from collections.abc import AsyncIterator, Awaitable, Callable
from dataclasses import dataclass, replace
from datetime import UTC, datetime, timedelta
from typing import Any

import pytest
from google.cloud import firestore
from google.cloud.firestore_v1.base_query import FieldFilter

from scrapejobs_scale.firestore_layout import StoreLayout
from scrapejobs_shared.adapters.firestore import crawl_budget
from scrapejobs_shared.adapters.firestore.job_store import FirestoreJobStore
from scrapejobs_shared.adapters.firestore.outcome_stats import FirestoreStatsWriter
from scrapejobs_shared.adapters.memory.job_store import MemoryJobStore
from scrapejobs_shared.domain.batch_transitions import FinishTask
from scrapejobs_shared.domain.jobspec import JobSpec
from scrapejobs_shared.domain.outcome_stats import Totals, slot_of
from scrapejobs_shared.domain.records import BatchItem, BatchRecord, JobRecord, TaskOutcome
from scrapejobs_shared.domain.statuses import JobStatus, TaskStatus
from scrapejobs_shared.ports.batch_store import BatchClaim
from scrapejobs_shared.ports.job_store import Busy, Claimed
from scrapejobs_shared.ports.outcome_stats import SourceTotals
from support.firestore_tree import changed_by, document_tree

pytestmark = pytest.mark.emulators

NOW = datetime.now(UTC)
LEASE = NOW + timedelta(seconds=40)
OK = TaskOutcome(TaskStatus.SUCCEEDED, http_status=200, elapsed_ms=5)


@dataclass
class Both:
    """The adapter on the emulator and the twin the layout reads, given the same calls."""

    client: firestore.AsyncClient
    real: FirestoreJobStore
    twin: MemoryJobStore
    tenant: str
    layout: StoreLayout  # one, as the simulation holds it: it keeps the created batches' shards

    async def documents(self, job_ids: list[str]) -> dict[str, Any]:
        """Every document of these jobs (their subcollections' too, and their results at the
        root) and of the tenant's statistics, with its update time."""
        found: dict[str, Any] = {}
        for job_id in job_ids:
            found |= await document_tree(self.client.collection("jobs").document(job_id))
            results = self.client.collection("tasks").where(
                filter=FieldFilter("job_id", "==", job_id)
            )
            async for snap in results.stream():
                found[snap.reference.path] = snap.update_time
        stats = self.client.collection("stats_slots")
        query = stats.where(filter=FieldFilter("tenant", "==", self.tenant))
        async for snap in query.stream():
            found[snap.reference.path] = snap.update_time
        return found

    async def written(self, job_ids: list[str], call: Callable[[], Awaitable[Any]]) -> set[str]:
        """The documents ``call`` created, changed or deleted on the emulator."""
        written, _ = await changed_by(lambda: self.documents(job_ids), call)
        return written

    async def claim(self, job_ids: list[str], claim: BatchClaim) -> tuple[Claimed, Claimed]:
        """``claim`` on both, its writes checked against the layout's."""
        claimed: list[Any] = []

        async def claim_it() -> None:
            claimed.append(await self.real.claim_batch(claim))

        assert await self.written(job_ids, claim_it) == self.said("claim_batch", claim)
        twin = await self.twin.claim_batch(claim)
        assert isinstance(claimed[0], Claimed) and isinstance(twin, Claimed)
        return claimed[0], twin

    def said(self, name: str, *args: Any, answer: Any = None, **kwargs: Any) -> set[str]:
        """The documents the layout says ``name`` writes (its commits, flattened)."""
        write = self.layout.layout()[name]
        return {path for commit in write.commits(args, kwargs, answer) for path in commit}


@pytest.fixture
async def both(stack: Any) -> AsyncIterator[Both]:
    client = firestore.AsyncClient(project=stack.config.project_id)
    twin = MemoryJobStore()
    tenant = f"layout{uuid.uuid4().hex}"
    yield Both(client, FirestoreJobStore(client), twin, tenant, StoreLayout(twin))
    client.close()


def a_job(tenant: str, batches: int, per_batch: int) -> tuple[JobRecord, list[BatchRecord]]:
    job_id = uuid.uuid4().hex
    expire = NOW + timedelta(days=1)
    planned = [
        BatchRecord(
            job_id=job_id,
            id=f"b{b}",
            items=tuple(
                BatchItem(f"t{b}-{i}", f"http://layout.example/{b}/{i}", index=b * 10 + i)
                for i in range(per_batch)
            ),
            created_at=NOW,
            expire_at=expire,
            tenant=tenant,
        )
        for b in range(batches)
    ]
    job = JobRecord(
        job_id,
        JobStatus.QUEUED,
        JobSpec(),
        NOW,
        NOW,
        expire,
        total=batches * per_batch,
        counter_shards=2,
        tenant=tenant,
    )
    return job, planned


async def test_a_job_of_batches_writes_what_the_layout_says(both: Both) -> None:
    job, batches = a_job(both.tenant, batches=3, per_batch=2)
    ids = [job.id]

    async def create() -> None:
        await both.real.create_job(job, batches)

    assert await both.written(ids, create) == both.said("create_job", job, batches)
    await both.twin.create_job(job, batches)

    real_claim, twin_claim = await both.claim(ids, BatchClaim(job.id, "b0", NOW, LEASE))

    async def claim_leased() -> None:  # Busy: the lease runs (a deferring batch's, a moment)
        assert isinstance(await both.real.claim_batch(busy), Busy)

    busy = BatchClaim(job.id, "b0", NOW, LEASE)
    assert await both.written(ids, claim_leased) == both.said("claim_batch", busy) == set()

    first = [FinishTask("t0-0", OK, service_ms=10)]
    handle: list[Any] = [real_claim.handle]

    async def settle_first() -> None:
        handle[0] = (await both.real.settle(handle[0], first, NOW, LEASE)).handle

    said = both.said("settle", twin_claim.handle, first, NOW, LEASE)
    assert await both.written(ids, settle_first) == said
    twin_handle = (await both.twin.settle(twin_claim.handle, first, NOW, LEASE)).handle

    last = [FinishTask("t0-1", OK, service_ms=10)]

    async def settle_last() -> None:
        await both.real.settle(handle[0], last, NOW, None)

    said = both.said("settle", twin_handle, last, NOW, None)
    assert await both.written(ids, settle_last) == said
    await both.twin.settle(twin_handle, last, NOW, None)

    lost = TaskOutcome(TaskStatus.DEAD_LETTERED, error="lost")

    async def close() -> None:
        await both.real.close_batch(job.id, "b1", lost, NOW)

    assert await both.written(ids, close) == both.said("close_batch", job.id, "b1", lost, NOW)
    await both.twin.close_batch(job.id, "b1", lost, NOW)

    found = BatchRecord(
        job_id=job.id,
        id="b9",
        items=(BatchItem("t9-0", "http://layout.example/9/0", index=90),),
        created_at=NOW,
        expire_at=NOW + timedelta(days=1),
        tenant=both.tenant,
    )

    async def add() -> None:
        await both.real.add_batch(found, max_new=5)

    assert await both.written(ids, add) == both.said("add_batch", found, max_new=5)
    await both.twin.add_batch(found, max_new=5)

    # a page found again (another batch of it), and a new page past a spent budget: the
    # adapter commits nothing, and the model charges nothing (it charged a whole batch each)
    again = replace(found, id="b10")
    past = replace(found, id="b11", items=(BatchItem("t11-0", "http://layout.example/11/0", 91),))
    for batch, max_new in ((again, 5), (past, 1)):

        async def add_nothing(batch: BatchRecord = batch, max_new: int = max_new) -> None:
            assert await both.real.add_batch(batch, max_new=max_new) is None

        assert await both.written(ids, add_nothing) == set()
        assert both.said("add_batch", batch, max_new=max_new) == set()


def ids_on_shard(shard: int, shards: int, count: int) -> list[str]:
    """Batch ids whose budget shard (their id's hash, crawl_budget.first_shard) is ``shard``."""
    ids = (f"found{n}" for n in range(1000))
    return [i for i in ids if crawl_budget.first_shard(i, shards) == shard][:count]


async def test_a_found_batch_is_counted_where_it_takes_its_budget(both: Both) -> None:
    """Two found batches fall on one budget shard; the first spends its part of the budget,
    so the second takes its pages from the next shard, and is counted there: its creation and
    its claim write that counter shard, on the emulator as in the layout."""
    job, batches = a_job(both.tenant, batches=2, per_batch=1)  # 2 counter shards
    ids = [job.id]
    await both.real.create_job(job, batches)
    both.said("create_job", job, batches)
    await both.twin.create_job(job, batches)
    own, spent = ids_on_shard(0, 2, 2)

    def found(batch_id: str) -> BatchRecord:
        items = tuple(
            BatchItem(f"{batch_id}-{i}", f"http://layout.example/{batch_id}/{i}", index=100 + i)
            for i in range(2)
        )
        return replace(batches[0], id=batch_id, items=items)

    for batch_id in (own, spent):  # max_new 4: two pages a budget shard

        async def add(batch: BatchRecord = found(batch_id)) -> None:
            assert await both.real.add_batch(batch, max_new=4) == batch

        said = both.said("add_batch", found(batch_id), max_new=4)
        assert await both.written(ids, add) == said
        await both.twin.add_batch(found(batch_id), max_new=4)
    assert f"jobs/{job.id}/counters/1" in said  # the second: shard 1's budget, and its count
    assert f"jobs/{job.id}/crawl/budget-1" in said
    claim = BatchClaim(job.id, spent, NOW, LEASE)
    assert f"jobs/{job.id}/counters/1" in both.said("claim_batch", claim)
    await both.claim(ids, claim)  # what the emulator wrote is what the layout says


async def test_a_job_that_holds_its_batch_writes_what_the_layout_says(both: Both) -> None:
    job, [batch] = a_job(both.tenant, batches=1, per_batch=1)
    ids = [job.id]
    tokens: list[Any] = []

    async def create() -> None:
        tokens.extend(await both.real.create_jobs([(job, [batch])]))

    assert await both.written(ids, create) == both.said("create_jobs", [(job, [batch])])
    await both.twin.create_jobs([(job, [batch])])

    real_claim, twin_claim = await both.claim(ids, BatchClaim(job.id, batch.id, NOW, LEASE))

    done = [FinishTask("t0-0", OK, service_ms=10)]

    async def settle() -> None:
        await both.real.settle(real_claim.handle, done, NOW, None)

    said = both.said("settle", twin_claim.handle, done, NOW, None)
    assert await both.written(ids, settle) == said


async def test_a_process_statistics_put_writes_what_the_layout_says(both: Both) -> None:
    entries = [SourceTotals(slot_of(NOW), both.tenant, Totals({TaskStatus.SUCCEEDED: 3}))]
    writer = FirestoreStatsWriter(both.client)

    async def put() -> None:
        await writer.put("p1", entries)

    assert await both.written([], put) == both.said("put", "p1", entries)
