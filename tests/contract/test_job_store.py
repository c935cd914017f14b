"""The JobStore/BatchStore contract: every case runs on the in-memory twin and on the Firestore
adapter against the real emulator (see the semantics in ``ports/job_store.py``).

Every case runs in both layouts: jobs as ``create_job`` writes them (a job, its batches, its
counter shards) and, for a job of one batch, as ``create_jobs`` does (one document that holds
its batch: ``holds_its_batch``); the ``-one-document`` fixtures create every one-batch job so.

Time is passed in explicitly, so a lapsed lease is simulated by claiming with a later ``now``
rather than by sleeping. Cases the Firestore adapter fails today are marked there with
``firestore_gap`` (a strict xfail naming the error): results Firestore cannot store.
"""

from __future__ import annotations

import asyncio
import random
import uuid
from collections.abc import AsyncIterator, Sequence
from dataclasses import replace
from datetime import UTC, datetime, timedelta
from typing import Any

import pytest
from google.api_core import exceptions as gexc
from google.cloud import firestore

from scrapejobs_shared.adapters.firestore.job_store import FirestoreJobStore
from scrapejobs_shared.adapters.memory.job_store import MemoryJobStore
from scrapejobs_shared.delivery.batching import plan_batches, shards_for
from scrapejobs_shared.domain.batch_transitions import FinishTask, HandOffTask, ReleaseTask
from scrapejobs_shared.domain.jobspec import JobSpec
from scrapejobs_shared.domain.model_usage import ModelUsage
from scrapejobs_shared.domain.records import (
    BatchItem,
    BatchRecord,
    Handoff,
    JobRecord,
    TaskOutcome,
    TaskRecord,
    task_id_for,
)
from scrapejobs_shared.domain.statuses import JobStatus, TaskStatus
from scrapejobs_shared.extraction.field_types import MAX_URL_LENGTH, MAX_URLS
from scrapejobs_shared.extraction.result_size import DEFAULT_MAX_BYTES
from scrapejobs_shared.observability.store_ops import counting
from scrapejobs_shared.ports.batch_store import BatchClaim
from scrapejobs_shared.ports.job_store import (
    AlreadyDone,
    Busy,
    Claimed,
    JobExists,
    JobStore,
    Missing,
    Page,
    Settled,
    holds_its_batch,
)
from scrapejobs_shared.ports.page import PageRequest
from scrapejobs_shared.ports.recovery_queries import TaskScope

LEASE = timedelta(seconds=40)
Store = JobStore


@pytest.fixture(
    params=[
        "memory",
        "memory-one-document",
        pytest.param("firestore", marks=pytest.mark.emulators),
        pytest.param("firestore-one-document", marks=pytest.mark.emulators),
    ]
)
async def store(request: pytest.FixtureRequest) -> AsyncIterator[Store]:
    one_document = request.param.endswith("-one-document")
    if request.param.startswith("memory"):
        yield (one_document_jobs(MemoryJobStore) if one_document else MemoryJobStore)()
        return
    stack = request.getfixturevalue("stack")
    client = firestore.AsyncClient(project=stack.config.project_id)
    kind = one_document_jobs(FirestoreJobStore) if one_document else FirestoreJobStore
    yield kind(client)
    client.close()


def one_document_jobs(kind: type[Any]) -> type[Any]:
    """The store, creating every job of one batch as ``create_jobs`` does (its claims are
    given no claim token: they read, as a redelivery's do)."""

    class OneDocumentJobs(kind):  # type: ignore[misc,valid-type]
        one_document = True

        async def create_job(self, job: JobRecord, batches: Sequence[BatchRecord]) -> None:
            if holds_its_batch(job, batches):
                await self.create_jobs([(job, batches)])
            else:
                await super().create_job(job, batches)

    return OneDocumentJobs


def holds_batch(store: Store, job: JobRecord, batches: Sequence[BatchRecord]) -> bool:
    """Whether the job was created as one document (the ``-one-document`` layouts)."""
    return getattr(store, "one_document", False) and holds_its_batch(job, batches)


# ---- helpers ---------------------------------------------------------------------------------


def firestore_gap(
    request: pytest.FixtureRequest, store: Store, reason: str, raises: type[Exception]
) -> None:
    """A case the Firestore adapter fails today with ``raises`` (the memory twin passes):
    expected to fail there until fixed, and an error (strict XPASS) once it passes."""
    if isinstance(store, FirestoreJobStore):
        request.applymarker(pytest.mark.xfail(strict=True, reason=reason, raises=raises))


async def a_job(
    store: Store,
    tasks: int = 4,
    *,
    batch_size: int = 50,
    kind: str = "urls",
    created: datetime | None = None,
    publishing: bool = False,
    tenant: str = "default",
) -> tuple[JobRecord, list[BatchRecord]]:
    """A job written through ``create_job`` the way the dispatcher plans it."""
    job, batches = planned_job(tasks, batch_size, kind, created, publishing)
    job = replace(job, tenant=tenant)
    await store.create_job(job, batches)
    return job, batches


def planned_job(
    tasks: int = 4,
    batch_size: int = 50,
    kind: str = "urls",
    created: datetime | None = None,
    publishing: bool = False,
) -> tuple[JobRecord, list[BatchRecord]]:
    """A job and its batches, planned the way the dispatcher plans them."""
    created = created or datetime.now(UTC)
    expire = created + timedelta(days=1)
    job_id = uuid.uuid4().hex
    items = [
        BatchItem(task_id_for(job_id, str(i)), f"http://a.example/p/{i}", index=i)
        for i in range(tasks)
    ]
    batches = plan_batches(job_id, items, batch_size, created, expire)
    job = JobRecord(
        job_id,
        JobStatus.QUEUED,
        JobSpec(),
        created,
        created,
        expire,
        total=tasks,
        kind=kind,
        publishing=publishing,
        counter_shards=shards_for(len(batches)),
    )
    return job, batches


def tally(**counts: int) -> dict[TaskStatus, int]:
    """Every status's count: those named, zero for the rest."""
    return {status: counts.get(status.value, 0) for status in TaskStatus}


def ids(batch: BatchRecord) -> list[str]:
    return [item.task_id for item in batch.items]


def ok(task_id: str, n: int = 0) -> FinishTask:
    return FinishTask(task_id, TaskOutcome(TaskStatus.SUCCEEDED, http_status=200, data={"n": n}))


def ended(task_id: str, status: TaskStatus, error: str | None = None) -> FinishTask:
    return FinishTask(task_id, TaskOutcome(status, error=error))


async def claim(store: Store, batch: BatchRecord, now: datetime) -> Claimed:
    result = await store.claim_batch(BatchClaim(batch.job_id, batch.id, now, now + LEASE))
    assert isinstance(result, Claimed), result
    return result


async def all_tasks(store: Store, job_id: str, page_size: int = 100) -> list[TaskRecord]:
    tasks: list[TaskRecord] = []
    token: str | None = None
    while True:
        page = await store.list_tasks(job_id, page_size, token)
        assert len(page.items) <= page_size
        tasks += page.items
        token = page.next_page_token
        if token is None:
            return tasks


async def all_open_batches(store: Store, job_id: str, page_size: int) -> list[BatchRecord]:
    batches: list[BatchRecord] = []
    token: str | None = None
    while True:
        page: Page[BatchRecord] = await store.open_batches(job_id, page_size, token)
        assert len(page.items) <= page_size
        batches += page.items
        token = page.next_page_token
        if token is None:
            return batches


# ---- jobs ------------------------------------------------------------------------------------


async def test_a_new_job_has_every_task_queued_and_an_id_is_created_once(store: Store) -> None:
    job, batches = await a_job(store, 120, batch_size=50)
    assert [len(b.items) for b in batches] == [50, 50, 20]
    stored = await store.get_job(job.id)
    assert stored is not None
    assert (stored.id, stored.status, stored.total, stored.kind) == (
        job.id,
        job.status,
        120,
        "urls",
    )
    assert stored.counter_shards == job.counter_shards and stored.created_at == job.created_at
    counts = await store.count_tasks(job.id)
    assert counts == tally(queued=120) and sum(counts.values()) == job.total
    assert await store.has_open_tasks(job.id)

    with pytest.raises(JobExists):
        await store.create_job(job, batches)
    assert await store.count_tasks(job.id) == tally(queued=120)


async def test_a_job_created_twice_at_once_is_created_once(store: Store) -> None:
    """A retried scheduler trigger: the same job id, planned the same way, submitted twice."""
    now = datetime.now(UTC)
    job_id = uuid.uuid4().hex
    items = [BatchItem(task_id_for(job_id, str(i)), f"http://a.example/{i}") for i in range(120)]
    batches = plan_batches(job_id, items, 50, now, now + timedelta(days=1))
    job = JobRecord(
        job_id,
        JobStatus.QUEUED,
        JobSpec(),
        now,
        now,
        now + timedelta(days=1),
        total=120,
        counter_shards=shards_for(len(batches)),
    )
    results = await asyncio.gather(
        *(store.create_job(job, batches) for _ in range(2)), return_exceptions=True
    )
    assert sorted(type(r).__name__ for r in results) == ["JobExists", "NoneType"]
    assert await store.count_tasks(job_id) == tally(queued=120)
    assert len(await all_open_batches(store, job_id, 10)) == 3


async def test_coalesced_jobs_are_created_together_or_not_at_all(store: Store) -> None:
    """``create_jobs``: several small jobs in one commit; one existing id writes none."""
    jobs = [planned_job(1, publishing=True) for _ in range(20)]
    with counting() as ops:
        await store.create_jobs(jobs)
    for job, _ in jobs:
        assert await store.count_tasks(job.id) == tally(queued=1)
        stored = await store.get_job(job.id)
        assert stored is not None and stored.publishing and stored.status is JobStatus.QUEUED
    if isinstance(store, FirestoreJobStore):
        assert (ops.reads, ops.writes) == (0, 20)  # one document each (it holds its batch)
    await store.mark_published([job.id for job, _ in jobs], datetime.now(UTC))
    assert not any(j.publishing for j in await store.stuck_publishing(datetime.now(UTC), 100))

    fresh = [planned_job(1) for _ in range(3)]
    with pytest.raises(JobExists):
        await store.create_jobs([*fresh, jobs[5]])
    for job, _ in fresh:
        assert await store.get_job(job.id) is None
        assert await store.count_tasks(job.id) == dict.fromkeys(TaskStatus, 0)
    assert await store.count_tasks(jobs[5][0].id) == tally(queued=1)


async def test_a_settle_retried_after_it_landed_still_says_the_job_may_be_done(
    store: Store,
) -> None:
    """A commit that landed though its caller saw an error (a timeout under load) is retried
    with the same changes and the old handle: nothing is finished twice, and the retry still
    says the job may be done, or the job would never be completed."""
    job, [batch] = await a_job(store, 1)
    now = datetime.now(UTC)
    claim = await store.claim_batch(BatchClaim(job.id, batch.id, now, now + LEASE))
    assert isinstance(claim, Claimed)
    [task_id] = ids(batch)
    first = await store.settle(claim.handle, [ok(task_id)], now)
    assert first.finished == (task_id,) and first.job_may_be_done
    retried = await store.settle(claim.handle, [ok(task_id)], now)
    assert retried.finished == () and retried.job_may_be_done
    assert await store.count_tasks(job.id) == tally(succeeded=1)


async def test_a_first_claim_can_record_the_job_s_start_and_leaves_its_status(
    store: Store,
) -> None:
    """``mark_started`` (coalesced jobs, which no worker marks running): the first claim
    records the start, which a status read reports; a cancel stays a cancel; a later claim
    does not move the start. A job that holds its batch is marked running by the claim (its
    status is in the document the claim writes)."""
    job, [batch] = await a_job(store, 2)
    t0 = datetime.now(UTC)
    claimed = await store.claim_batch(
        BatchClaim(job.id, batch.id, t0, t0 + LEASE, mark_started=True)
    )
    assert isinstance(claimed, Claimed)
    found = await store.job_with_counts(job.id)
    assert found is not None and found[0].started_at == t0
    status = JobStatus.RUNNING if holds_batch(store, job, [batch]) else JobStatus.QUEUED
    assert found[0].status is status and found[1] == tally(running=2)

    assert await store.cancel_job(job.id, t0)
    later = t0 + LEASE + timedelta(seconds=1)
    again = await store.claim_batch(
        BatchClaim(job.id, batch.id, later, later + LEASE, mark_started=True)
    )
    assert isinstance(again, Claimed) and again.cancelled
    found = await store.job_with_counts(job.id)
    assert found is not None and found[0].started_at == t0
    assert found[0].status is JobStatus.CANCELLED


async def test_a_job_is_read_with_its_counts(store: Store) -> None:
    """``job_with_counts``: what ``get_job`` and ``count_tasks`` say, read together, whether
    or not this store knows the job's counter shards yet."""
    job, [first, _, _] = await a_job(store, 120, batch_size=50)
    now = datetime.now(UTC)
    claimed = await store.claim_batch(BatchClaim(job.id, first.id, now, now + LEASE))
    assert isinstance(claimed, Claimed)
    await store.settle(claimed.handle, [ok(t) for t in ids(first)[:10]], now)
    expected = tally(queued=70, running=40, succeeded=10)
    stores: list[Store] = [store]
    if isinstance(store, FirestoreJobStore):
        stores.append(FirestoreJobStore(store._client))  # type: ignore[attr-defined]  # cold
    for reader in stores:
        found = await reader.job_with_counts(job.id)
        assert found is not None
        stored, counts = found
        assert (stored.id, stored.total, stored.status) == (job.id, 120, JobStatus.QUEUED)
        assert counts == expected == await reader.count_tasks(job.id)
        assert await reader.job_with_counts(job.id) == found  # the warm path says the same
        assert await reader.job_with_counts(uuid.uuid4().hex) is None


async def test_the_largest_submission_the_api_accepts_is_stored(store: Store) -> None:
    """10,000 URLs of 2,048 characters (the dispatcher's body limit is sized for them)."""
    now = datetime.now(UTC)
    job_id = uuid.uuid4().hex
    urls = [f"http://a.example/{n:05d}/".ljust(MAX_URL_LENGTH, "x") for n in range(MAX_URLS)]
    items = [BatchItem(task_id_for(job_id, str(i)), url, index=i) for i, url in enumerate(urls)]
    batches = plan_batches(job_id, items, 50, now, now + timedelta(days=1))
    job = JobRecord(
        job_id,
        JobStatus.QUEUED,
        JobSpec(),
        now,
        now,
        now + timedelta(days=1),
        total=MAX_URLS,
        counter_shards=shards_for(len(batches)),
    )
    await store.create_job(job, batches)
    assert await store.count_tasks(job_id) == tally(queued=MAX_URLS)
    page = await store.open_batches(job_id, 1, None)
    assert len(page.items) == 1 and page.items[0].items[0].url in set(urls)


async def test_a_plain_job_lists_a_task_once_it_has_a_result(store: Store) -> None:
    job, [batch] = await a_job(store, 7)
    assert await store.list_tasks(job.id, 10, None) == Page([], None)
    assert await store.get_task(job.id, batch.items[0].task_id) is None

    now = datetime.now(UTC)
    claimed = await claim(store, batch, now)
    assert await store.list_tasks(job.id, 10, None) == Page([], None)  # running is no result
    finished = ids(batch)[:5]
    await store.settle(claimed.handle, [ok(t, n) for n, t in enumerate(finished)], now)

    listed = await all_tasks(store, job.id, page_size=2)
    assert [t.id for t in listed] == sorted(finished)
    assert all(t.status is TaskStatus.SUCCEEDED for t in listed)


async def test_a_crawl_lists_its_pages_queued_at_once(store: Store) -> None:
    job, [batch] = await a_job(store, 3, kind="crawl")
    listed = await all_tasks(store, job.id, page_size=2)
    expected = {
        item.task_id: TaskRecord(
            job.id,
            item.task_id,
            item.url,
            TaskStatus.QUEUED,
            batch.created_at,
            batch.created_at,
            batch.expire_at,
            index=item.index,
            batch_id=batch.id,
        )
        for item in batch.items
    }
    assert listed == [expected[t] for t in sorted(expected)]

    now = datetime.now(UTC)
    claimed = await claim(store, batch, now)
    await store.settle(claimed.handle, [ok(batch.items[1].task_id)], now)
    statuses = {t.id: t.status for t in await all_tasks(store, job.id)}
    assert statuses == {
        batch.items[0].task_id: TaskStatus.QUEUED,
        batch.items[1].task_id: TaskStatus.SUCCEEDED,
        batch.items[2].task_id: TaskStatus.QUEUED,
    }


async def test_job_status_only_moves_forward(store: Store) -> None:
    job, _ = await a_job(store, 1)
    now = datetime.now(UTC)
    assert await store.set_job_status(job.id, JobStatus.RUNNING, now)
    assert not await store.set_job_status(job.id, JobStatus.QUEUED, now)
    assert await store.set_job_status(job.id, JobStatus.COMPLETED, now)
    assert not await store.set_job_status(job.id, JobStatus.CANCELLED, now)
    stored = await store.get_job(job.id)
    assert stored is not None and stored.status is JobStatus.COMPLETED
    assert not await store.set_job_status(uuid.uuid4().hex, JobStatus.RUNNING, now)


async def test_unknown_and_reserved_ids_are_missing(store: Store) -> None:
    job, [batch] = await a_job(store, 2)
    now = datetime.now(UTC)
    for job_id, batch_id in [
        (job.id, uuid.uuid4().hex),
        (uuid.uuid4().hex, batch.id),
        ("__x__", batch.id),
        (job.id, "__x__"),
    ]:
        assert await store.claim_batch(BatchClaim(job_id, batch_id, now, now + LEASE)) == Missing()
        outcome = TaskOutcome(TaskStatus.DEAD_LETTERED)
        assert await store.close_batch(job_id, batch_id, outcome, now) == Missing()
    assert await store.get_job("__x__") is None
    assert await store.get_task(job.id, "__x__") is None
    assert await store.get_task("__x__", batch.items[0].task_id) is None
    assert await store.list_tasks("__x__", 10, None) == Page([], None)
    assert not await store.cancel_job("__x__", now)
    assert not await store.set_job_status("__x__", JobStatus.RUNNING, now)
    assert await store.count_tasks(uuid.uuid4().hex) == tally()
    assert not await store.has_open_tasks(uuid.uuid4().hex)
    assert await store.count_tasks(job.id) == tally(queued=2)  # nothing was touched


# ---- claims ----------------------------------------------------------------------------------


async def test_a_claim_runs_every_open_task_once_more(store: Store) -> None:
    job, [batch] = await a_job(store, 3)
    now = datetime.now(UTC)
    claimed = await claim(store, batch, now)
    assert not claimed.cancelled
    assert claimed.batch.id == batch.id and claimed.batch.lease_until == now + LEASE
    assert [(i.task_id, i.status, i.attempts) for i in claimed.batch.items] == [
        (t, TaskStatus.RUNNING, 1) for t in ids(batch)
    ]
    assert await store.count_tasks(job.id) == tally(running=3)


async def test_concurrent_claims_have_one_winner(store: Store) -> None:
    job, [batch] = await a_job(store, 5)
    now = datetime.now(UTC)
    results = await asyncio.gather(
        *(store.claim_batch(BatchClaim(job.id, batch.id, now, now + LEASE)) for _ in range(6))
    )
    winners = [r for r in results if isinstance(r, Claimed)]
    assert len(winners) == 1, results
    assert [r for r in results if not isinstance(r, Claimed)] == [Busy(now + LEASE)] * 5
    assert all(i.attempts == 1 for i in winners[0].batch.items)
    assert await store.count_tasks(job.id) == tally(running=5)


async def test_a_lapsed_lease_can_be_claimed_again(store: Store) -> None:
    job, [batch] = await a_job(store, 3)
    t0 = datetime.now(UTC)
    first = await claim(store, batch, t0)
    await store.settle(first.handle, [ok(batch.items[0].task_id)], t0)

    still = t0 + LEASE - timedelta(seconds=1)
    assert await store.claim_batch(BatchClaim(job.id, batch.id, still, still + LEASE)) == Busy(
        t0 + LEASE
    )

    later = t0 + LEASE + timedelta(seconds=1)
    again = await claim(store, batch, later)
    assert again.batch.lease_until == later + LEASE
    assert [(i.status, i.attempts) for i in again.batch.items] == [
        (TaskStatus.SUCCEEDED, 1),
        (TaskStatus.RUNNING, 2),
        (TaskStatus.RUNNING, 2),
    ]
    assert await store.count_tasks(job.id) == tally(running=2, succeeded=1)


async def test_a_batch_whose_tasks_all_ended_is_already_done(store: Store) -> None:
    job, [batch] = await a_job(store, 2)
    now = datetime.now(UTC)
    claimed = await claim(store, batch, now)
    await store.settle(
        claimed.handle, [ok(ids(batch)[0]), ended(ids(batch)[1], TaskStatus.FAILED)], now
    )
    later = now + LEASE + timedelta(seconds=1)
    assert (
        await store.claim_batch(BatchClaim(job.id, batch.id, later, later + LEASE)) == AlreadyDone()
    )
    assert await store.claim_batch(BatchClaim(job.id, batch.id, now, now + LEASE)) == AlreadyDone()


# ---- settles ---------------------------------------------------------------------------------


async def test_finishes_move_counts_exactly_and_never_backwards(store: Store) -> None:
    job, [batch] = await a_job(store, 4)
    a, b, c, d = ids(batch)
    now = datetime.now(UTC)
    claimed = await claim(store, batch, now)

    first = await store.settle(
        claimed.handle, [ok(a, 1), ended(b, TaskStatus.FAILED, "http 404")], now
    )
    assert first.finished == (a, b) and not first.cancelled
    assert await store.count_tasks(job.id) == tally(running=2, succeeded=1, failed=1)

    # The same task again, with the newest handle and with the claim's: nothing changes.
    for handle in (first.handle, claimed.handle):
        again = await store.settle(handle, [ended(a, TaskStatus.FAILED, "late")], now)
        assert again.finished == () and not again.job_may_be_done
        assert await store.count_tasks(job.id) == tally(running=2, succeeded=1, failed=1)
    result = await store.get_task(job.id, a)
    assert result is not None and result.status is TaskStatus.SUCCEEDED
    assert result.data == {"n": 1} and result.error is None

    # Unknown task ids and non-terminal outcomes of ended tasks are ignored.
    stray = await store.settle(first.handle, [ok(task_id_for(job.id, "stray"))], now)
    assert stray.finished == ()

    last = await store.settle(
        first.handle,
        [ended(c, TaskStatus.DEAD_LETTERED, "timeout"), ended(d, TaskStatus.CANCELLED)],
        now,
    )
    assert last.finished == (c, d) and last.job_may_be_done
    assert not await store.has_open_tasks(job.id)
    assert await store.count_tasks(job.id) == tally(
        succeeded=1, failed=1, dead_lettered=1, cancelled=1
    )


async def test_results_carry_the_outcome(store: Store) -> None:
    job, [batch] = await a_job(store, 2)
    a, b = batch.items
    t0 = datetime.now(UTC)
    claimed = await claim(store, batch, t0)
    fetched = t0 + timedelta(milliseconds=250)
    outcome = TaskOutcome(
        TaskStatus.SUCCEEDED,
        http_status=200,
        data={"title": "A", "tags": ["x", "y"], "price": 9.5, "nested": {"k": None}},
        fetched_at=fetched,
        elapsed_ms=250,
        truncated_fields=("body",),
        field_errors={"sku": "no match"},
        tls_unverified=True,
    )
    settled_at = t0 + timedelta(seconds=1)
    await store.settle(
        claimed.handle,
        [FinishTask(a.task_id, outcome), ended(b.task_id, TaskStatus.FAILED, "http 500")],
        settled_at,
    )
    expected_a = TaskRecord(
        job.id,
        a.task_id,
        a.url,
        TaskStatus.SUCCEEDED,
        batch.created_at,
        settled_at,
        batch.expire_at,
        index=a.index,
        attempts=1,
        http_status=200,
        data={"title": "A", "tags": ["x", "y"], "price": 9.5, "nested": {"k": None}},
        fetched_at=fetched,
        elapsed_ms=250,
        truncated_fields=("body",),
        field_errors={"sku": "no match"},
        tls_unverified=True,
        batch_id=batch.id,
    )
    expected_b = TaskRecord(
        job.id,
        b.task_id,
        b.url,
        TaskStatus.FAILED,
        batch.created_at,
        settled_at,
        batch.expire_at,
        index=b.index,
        attempts=1,
        error="http 500",
        batch_id=batch.id,
    )
    assert await store.get_task(job.id, a.task_id) == expected_a
    assert await store.get_task(job.id, b.task_id) == expected_b
    assert await all_tasks(store, job.id) == sorted([expected_a, expected_b], key=lambda t: t.id)


UNUSUAL_JSON = [  # Firestore maps refuse all of these; results keep data as one JSON value
    pytest.param(
        {"json": {"type": "Polygon", "coordinates": [[[0, 0], [1, 0], [1, 1]]]}},
        id="nested-arrays",
    ),
    pytest.param({"json": {"": "an empty key"}}, id="empty-key"),
    pytest.param(
        {"__x__": "a field name the spec allows", "json": {"__meta__": 1}}, id="dunder-keys"
    ),
    pytest.param({"json": {"id": 2**64}}, id="uint64"),
]


@pytest.mark.parametrize("data", UNUSUAL_JSON)
async def test_a_result_keeps_whatever_json_the_page_had(
    store: Store, data: dict[str, Any]
) -> None:
    """``data["json"]`` is a JSON page as parsed, and field names may be ``__x__``."""
    job, [batch] = await a_job(store, 2)
    a, b = ids(batch)
    now = datetime.now(UTC)
    claimed = await claim(store, batch, now)
    outcome = TaskOutcome(TaskStatus.SUCCEEDED, http_status=200, data=data)
    settled = await store.settle(claimed.handle, [FinishTask(a, outcome), ok(b)], now)
    assert settled.finished == (a, b)
    stored = await store.get_task(job.id, a)
    assert stored is not None and stored.data == data
    assert await store.count_tasks(job.id) == tally(succeeded=2)


async def test_a_settle_records_results_of_any_total_size(
    store: Store, request: pytest.FixtureRequest
) -> None:
    """Each result fits its document (``fit_result``), but a flush may hold many of them."""
    firestore_gap(
        request,
        store,
        "one commit carries every result of the settle: over 10 MiB (4 MiB on the emulator) "
        "Firestore refuses it (RESOURCE_EXHAUSTED, at once), and the worker keeps "
        "retrying the same, growing, set of changes",
        gexc.ResourceExhausted,  # "gRPC message exceeds maximum size"
    )
    job, [batch] = await a_job(store, 12)
    now = datetime.now(UTC)
    claimed = await claim(store, batch, now)
    page = "x" * (DEFAULT_MAX_BYTES - 20_000)
    outcome = TaskOutcome(TaskStatus.SUCCEEDED, http_status=200, data={"html": page})
    settled = await store.settle(claimed.handle, [FinishTask(t, outcome) for t in ids(batch)], now)
    assert len(settled.finished) == 12 and settled.job_may_be_done
    assert await store.count_tasks(job.id) == tally(succeeded=12)
    stored = await store.get_task(job.id, ids(batch)[0])
    assert stored is not None and stored.data == {"html": page}


async def test_a_release_keeps_the_task_running_with_its_error(store: Store) -> None:
    job, [batch] = await a_job(store, 3)
    a, b, c = ids(batch)
    t0 = datetime.now(UTC)
    claimed = await claim(store, batch, t0)
    released = await store.settle(
        claimed.handle,
        [ReleaseTask(a, "timeout"), ReleaseTask(b, "throttled", refund_attempt=True)],
        t0,
    )
    assert released.finished == () and not released.job_may_be_done
    assert await store.count_tasks(job.id) == tally(running=3)
    assert await store.get_task(job.id, a) is None  # a release is no result

    later = t0 + LEASE + timedelta(seconds=1)
    again = await claim(store, batch, later)
    assert [(i.status, i.attempts, i.error) for i in again.batch.items] == [
        (TaskStatus.RUNNING, 2, "timeout"),
        (TaskStatus.RUNNING, 1, "throttled"),  # the refunded attempt
        (TaskStatus.RUNNING, 2, None),
    ]
    assert await store.count_tasks(job.id) == tally(running=3)

    settled = await store.settle(
        again.handle, [ended(a, TaskStatus.DEAD_LETTERED), ok(b), ok(c)], later
    )
    assert settled.finished == (a, b, c) and settled.job_may_be_done
    dead = await store.get_task(job.id, a)
    assert dead is not None and dead.error == "timeout" and dead.attempts == 2
    assert await store.count_tasks(job.id) == tally(succeeded=2, dead_lettered=1)


async def test_an_empty_settle_renews_the_lease(store: Store) -> None:
    job, [batch] = await a_job(store, 2)
    t0 = datetime.now(UTC)
    claimed = await claim(store, batch, t0)
    renewed_until = t0 + 2 * LEASE
    renewed = await store.settle(claimed.handle, [], t0 + LEASE / 2, lease_until=renewed_until)
    assert renewed.finished == () and not renewed.job_may_be_done and not renewed.cancelled

    after_first_lease = t0 + LEASE + timedelta(seconds=1)
    busy = await store.claim_batch(
        BatchClaim(job.id, batch.id, after_first_lease, after_first_lease + LEASE)
    )
    assert busy == Busy(renewed_until)
    outcome = TaskOutcome(TaskStatus.DEAD_LETTERED)
    assert await store.close_batch(job.id, batch.id, outcome, after_first_lease) == Busy(
        renewed_until
    )

    # The renewed handle still settles (and may renew again).
    done = await store.settle(renewed.handle, [ok(t) for t in ids(batch)], after_first_lease)
    assert done.finished == tuple(ids(batch)) and done.job_may_be_done
    assert await store.count_tasks(job.id) == tally(succeeded=2)

    expired = renewed_until + timedelta(seconds=1)
    assert (
        await store.claim_batch(BatchClaim(job.id, batch.id, expired, expired + LEASE))
        == AlreadyDone()
    )


async def test_a_stale_handle_applies_only_what_is_still_legal(store: Store) -> None:
    job, [batch] = await a_job(store, 4)
    a, b, c, d = ids(batch)
    t0 = datetime.now(UTC)
    first = await claim(store, batch, t0)

    later = t0 + LEASE + timedelta(seconds=1)
    second = await claim(store, batch, later)  # the first delivery's lease lapsed
    assert all(i.attempts == 2 for i in second.batch.items)

    late = await store.settle(first.handle, [ok(a), ok(b)], later)
    assert late.finished == (a, b)
    result = await store.get_task(job.id, a)
    assert result is not None and result.attempts == 2  # the batch as it is now

    racing = await store.settle(second.handle, [ended(a, TaskStatus.FAILED, "late"), ok(c)], later)
    assert racing.finished == (c,)
    assert await store.count_tasks(job.id) == tally(running=1, succeeded=3)

    # Both deliveries finish the last task at once: it is counted once.
    both = await asyncio.gather(
        store.settle(late.handle, [ended(d, TaskStatus.FAILED, "x")], later),
        store.settle(racing.handle, [ok(d)], later),
    )
    assert sorted(len(s.finished) for s in both) == [0, 1]
    assert any(s.job_may_be_done for s in both if s.finished)
    counts = await store.count_tasks(job.id)
    assert counts[TaskStatus.RUNNING] == 0 and sum(counts.values()) == 4
    assert counts[TaskStatus.SUCCEEDED] + counts[TaskStatus.FAILED] == 4
    stored_d = await store.get_task(job.id, d)
    assert stored_d is not None
    assert counts[stored_d.status] == (4 if stored_d.status is TaskStatus.SUCCEEDED else 1)
    assert not await store.has_open_tasks(job.id)


async def test_a_settle_after_a_close_does_not_count_twice(store: Store) -> None:
    job, [batch] = await a_job(store, 4)
    a, b, c, d = ids(batch)
    t0 = datetime.now(UTC)
    claimed = await claim(store, batch, t0)
    first = await store.settle(claimed.handle, [ok(a), ReleaseTask(b, "reset")], t0)

    later = t0 + LEASE + timedelta(seconds=1)
    closed = await store.close_batch(job.id, batch.id, TaskOutcome(TaskStatus.DEAD_LETTERED), later)
    assert isinstance(closed, Settled) and closed.finished == (b, c, d)
    assert closed.job_may_be_done and not await store.has_open_tasks(job.id)

    stale = await store.settle(first.handle, [ok(b), ok(c), ended(a, TaskStatus.FAILED)], later)
    assert stale.finished == ()
    assert await store.count_tasks(job.id) == tally(succeeded=1, dead_lettered=3)
    dead = await store.get_task(job.id, b)
    assert dead is not None and dead.status is TaskStatus.DEAD_LETTERED and dead.error == "reset"


async def test_the_settle_that_ends_the_last_task_may_end_the_job(store: Store) -> None:
    # Nine one-task batches: several counter shards on Firestore.
    job, batches = await a_job(store, 9, batch_size=1)
    assert job.counter_shards > 1
    now = datetime.now(UTC)
    claims = [await claim(store, batch, now) for batch in batches]
    for claimed in claims[:4]:
        settled = await store.settle(claimed.handle, [ok(ids(claimed.batch)[0])], now)
        assert await store.has_open_tasks(job.id)
        assert settled.finished == tuple(ids(claimed.batch))
    # The rest at once: the commit that closes the last open task must say so.
    rest = await asyncio.gather(
        *(store.settle(c.handle, [ok(ids(c.batch)[0])], now) for c in claims[4:])
    )
    assert all(len(s.finished) == 1 for s in rest)
    assert any(s.job_may_be_done for s in rest)
    assert not await store.has_open_tasks(job.id)
    assert await store.count_tasks(job.id) == tally(succeeded=9)


# ---- cancel ----------------------------------------------------------------------------------


async def test_a_claim_after_a_cancel_sees_it(store: Store) -> None:
    job, batches = await a_job(store, 9, batch_size=1)  # several counter shards
    now = datetime.now(UTC)
    before = await claim(store, batches[0], now)
    assert not before.cancelled
    assert await store.cancel_job(job.id, now)
    assert not await store.cancel_job(job.id, now)  # already ended
    stored = await store.get_job(job.id)
    assert stored is not None and stored.status is JobStatus.CANCELLED
    for batch in batches[1:]:
        assert (await claim(store, batch, now)).cancelled


async def test_a_settle_after_a_cancel_sees_it(store: Store) -> None:
    job, [batch] = await a_job(store, 3)
    a, b, c = ids(batch)
    now = datetime.now(UTC)
    claimed = await claim(store, batch, now)
    first = await store.settle(claimed.handle, [ok(a)], now)
    assert not first.cancelled
    assert await store.cancel_job(job.id, now)

    renewed = await store.settle(first.handle, [], now, lease_until=now + LEASE)
    assert renewed.cancelled
    stale = await store.settle(claimed.handle, [ended(b, TaskStatus.CANCELLED)], now)
    assert stale.cancelled and stale.finished == (b,)
    last = await store.settle(stale.handle, [ended(c, TaskStatus.CANCELLED)], now)
    assert last.cancelled and last.finished == (c,) and last.job_may_be_done
    assert await store.count_tasks(job.id) == tally(succeeded=1, cancelled=2)
    stored = await store.get_job(job.id)
    assert stored is not None and stored.status is JobStatus.CANCELLED


async def test_a_claimed_batch_hears_of_a_cancel_by_a_read_without_writing(store: Store) -> None:
    """A batch with nothing to record asks whether its job was cancelled (its counter shard,
    marked by the cancel), and the ask writes nothing: its next settle still holds its claim."""
    job, batches = await a_job(store, 9, batch_size=1)  # several counter shards
    now = datetime.now(UTC)
    claims = [await claim(store, batch, now) for batch in batches[:3]]
    with counting() as ops:
        assert not any([await store.cancel_heard(c.handle) for c in claims])
    assert ops.writes == 0
    assert await store.cancel_job(job.id, now)
    assert all([await store.cancel_heard(c.handle) for c in claims])
    [task_id] = ids(batches[0])
    settled = await store.settle(claims[0].handle, [ended(task_id, TaskStatus.CANCELLED)], now)
    assert settled.cancelled and settled.finished == (task_id,)


async def test_an_ended_job_cannot_be_cancelled(store: Store) -> None:
    job, [batch] = await a_job(store, 1)
    now = datetime.now(UTC)
    claimed = await claim(store, batch, now)
    settled = await store.settle(claimed.handle, [ok(ids(batch)[0])], now)
    assert settled.job_may_be_done and not await store.has_open_tasks(job.id)
    if holds_batch(store, job, [batch]):  # completed by the settle's own write
        assert settled.job_completed
        assert not await store.set_job_status(job.id, JobStatus.COMPLETED, now)
    else:
        assert not settled.job_completed
        assert await store.set_job_status(job.id, JobStatus.COMPLETED, now)
    assert not await store.cancel_job(job.id, now)
    stored = await store.get_job(job.id)
    assert stored is not None and stored.status is JobStatus.COMPLETED
    assert not await store.cancel_job(uuid.uuid4().hex, now)


# ---- close -----------------------------------------------------------------------------------


async def test_close_dead_letters_every_open_task_keeping_its_last_error(store: Store) -> None:
    job, [batch] = await a_job(store, 4)
    a, b, c, d = ids(batch)
    t0 = datetime.now(UTC)
    claimed = await claim(store, batch, t0)
    await store.settle(claimed.handle, [ok(a), ReleaseTask(b, "http 503")], t0)

    outcome = TaskOutcome(TaskStatus.DEAD_LETTERED)
    assert await store.close_batch(job.id, batch.id, outcome, t0) == Busy(t0 + LEASE)
    assert await store.count_tasks(job.id) == tally(running=3, succeeded=1)

    later = t0 + LEASE + timedelta(seconds=1)
    closed = await store.close_batch(job.id, batch.id, outcome, later)
    assert isinstance(closed, Settled)
    assert closed.finished == (b, c, d) and closed.job_may_be_done and not closed.cancelled
    assert await store.count_tasks(job.id) == tally(succeeded=1, dead_lettered=3)
    assert not await store.has_open_tasks(job.id)
    results = {t.id: t for t in await all_tasks(store, job.id)}
    assert [(results[t].status, results[t].error) for t in (b, c, d)] == [
        (TaskStatus.DEAD_LETTERED, "http 503"),
        (TaskStatus.DEAD_LETTERED, None),
        (TaskStatus.DEAD_LETTERED, None),
    ]
    assert results[b].attempts == 1 and results[b].updated_at == later
    assert results[a].status is TaskStatus.SUCCEEDED

    again = await store.close_batch(job.id, batch.id, outcome, later)
    assert isinstance(again, Settled) and again.finished == () and not again.job_may_be_done
    assert await store.count_tasks(job.id) == tally(succeeded=1, dead_lettered=3)
    assert (
        await store.claim_batch(BatchClaim(job.id, batch.id, later, later + LEASE)) == AlreadyDone()
    )


async def test_close_with_spent_at_leaves_tasks_of_fewer_attempts_open(store: Store) -> None:
    """A dead letter of deliveries that never reached a worker: only the tasks that spent
    their attempts end; the others stay open, named, for the batch to go out again."""
    job, [batch] = await a_job(store, 3)
    a, b, c = ids(batch)
    t0 = datetime.now(UTC)
    claimed = await claim(store, batch, t0)
    refunded = ReleaseTask(b, "dependency_unavailable", refund_attempt=True)
    await store.settle(claimed.handle, [ok(a), refunded], t0)
    later = t0 + LEASE + timedelta(seconds=1)
    dead = TaskOutcome(TaskStatus.DEAD_LETTERED)

    closed = await store.close_batch(job.id, batch.id, dead, later, spent_at=1)
    assert isinstance(closed, Settled) and closed.finished == (c,) and closed.left_open == (b,)
    assert await store.count_tasks(job.id) == tally(running=1, succeeded=1, dead_lettered=1)
    again = await store.close_batch(job.id, batch.id, dead, later, spent_at=1)
    assert isinstance(again, Settled) and again.finished == () and again.left_open == (b,)
    last = await store.close_batch(job.id, batch.id, dead, later)
    assert isinstance(last, Settled) and last.finished == (b,) and last.left_open == ()
    assert last.job_may_be_done


async def test_close_of_an_unclaimed_batch_fails_its_queued_tasks(store: Store) -> None:
    job, [first, second] = await a_job(store, 5, batch_size=3)
    now = datetime.now(UTC)
    lost = TaskOutcome(TaskStatus.FAILED, error="publish_failed: could not enqueue")
    closed = await store.close_batch(job.id, first.id, lost, now)
    assert isinstance(closed, Settled) and closed.finished == tuple(ids(first))
    assert await store.count_tasks(job.id) == tally(queued=2, failed=3)
    assert await store.has_open_tasks(job.id)
    result = await store.get_task(job.id, ids(first)[0])
    assert result is not None and result.error == lost.error and result.attempts == 0
    assert (await claim(store, second, now)).batch.items[0].attempts == 1


# ---- crawl -----------------------------------------------------------------------------------


def found(job: JobRecord, key: str, pages: list[str]) -> BatchRecord:
    """A batch of pages discovered on a crawl page (ids by URL, as the worker plans them)."""
    items = [
        BatchItem(task_id_for(job.id, url), url, depth=1, index=n) for n, url in enumerate(pages)
    ]
    [batch] = plan_batches(job.id, items, 50, job.created_at, job.expire_at, key=key)
    return batch


async def test_add_batch_adds_only_new_pages_within_the_budget(store: Store) -> None:
    job, [start] = await a_job(store, 1, kind="crawl")
    known = start.items[0]
    # A discovered page with the start page's task id is already known.
    first = found(job, "p1", ["http://a.example/b", "http://a.example/c"])
    first = BatchRecord(
        job.id,
        first.id,
        (BatchItem(known.task_id, known.url, depth=1), *first.items),
        first.created_at,
        first.expire_at,
    )
    added = await store.add_batch(first, max_new=4)
    assert added is not None and added.id == first.id
    assert [i.url for i in added.items] == ["http://a.example/b", "http://a.example/c"]
    assert all(i.status is TaskStatus.QUEUED and i.depth == 1 for i in added.items)
    assert await store.count_tasks(job.id) == tally(queued=3)
    listed = {t.url: t for t in await all_tasks(store, job.id)}
    assert set(listed) == {known.url, "http://a.example/b", "http://a.example/c"}
    assert listed["http://a.example/b"].status is TaskStatus.QUEUED
    assert listed["http://a.example/b"].depth == 1

    # Idempotent by batch id: the batch as stored, nothing counted again.
    assert await store.add_batch(first, max_new=4) == added
    # Nothing new: None.
    assert await store.add_batch(found(job, "p2", ["http://a.example/b"]), max_new=4) is None
    # The budget counts every page added over the job's lifetime: 2 of 4 are left.
    more = found(job, "p3", [f"http://a.example/d{n}" for n in range(5)])
    third = await store.add_batch(more, max_new=4)
    assert third is not None and [i.url for i in third.items] == [
        "http://a.example/d0",
        "http://a.example/d1",
    ]
    assert await store.add_batch(found(job, "p4", ["http://a.example/e"]), max_new=4) is None
    assert await store.add_batch(found(job, "p5", ["http://a.example/e"])) is not None
    assert await store.count_tasks(job.id) == tally(queued=6)

    claimed = await claim(store, added, datetime.now(UTC))
    assert [i.status for i in claimed.batch.items] == [TaskStatus.RUNNING] * 2
    assert await store.count_tasks(job.id) == tally(queued=4, running=2)
    assert await store.add_batch(found(job, "x", ["http://a.example/z"]), max_new=4) is None


async def test_a_crawl_s_budget_on_shards_gives_exactly_its_pages_to_parallel_batches(
    store: Store,
) -> None:
    """A crawl counted on 8 shards (crawl_budget.py): 10 batches of 5 new pages at once, a
    budget of 22; each batch takes from its own shard, then the next ones, so exactly 22 are
    added, none twice, and later batches get nothing."""
    job, batches = planned_job(1, kind="crawl")
    job = replace(job, counter_shards=8)
    await store.create_job(job, batches)
    pages = [[f"http://a.example/s{b}/{n}" for n in range(5)] for b in range(10)]
    added = await asyncio.gather(
        *(store.add_batch(found(job, f"p{b}", urls), max_new=22) for b, urls in enumerate(pages))
    )
    urls = [item.url for batch in added if batch is not None for item in batch.items]
    assert len(urls) == 22 and len(set(urls)) == 22
    assert await store.count_tasks(job.id) == tally(queued=23)
    late = found(job, "late", ["http://a.example/late"])
    assert await store.add_batch(late, max_new=22) is None


async def test_a_page_found_twice_at_once_is_added_once(store: Store) -> None:
    job, _ = await a_job(store, 1, kind="crawl")
    page = "http://a.example/twice"
    results = await asyncio.gather(
        store.add_batch(found(job, "left", [page, "http://a.example/left"])),
        store.add_batch(found(job, "right", [page, "http://a.example/right"])),
    )
    added = [item.url for r in results if r is not None for item in r.items]
    assert sorted(added) == sorted([page, "http://a.example/left", "http://a.example/right"])
    assert await store.count_tasks(job.id) == tally(queued=4)


async def test_add_batch_to_an_unknown_job_adds_nothing(store: Store) -> None:
    job, _ = await a_job(store, 1, kind="crawl")
    ghost = BatchRecord(
        uuid.uuid4().hex,
        uuid.uuid4().hex,
        (BatchItem(uuid.uuid4().hex, "http://a.example/ghost"),),
        job.created_at,
        job.expire_at,
    )
    assert await store.add_batch(ghost) is None
    assert await store.count_tasks(ghost.job_id) == tally()


# ---- listings --------------------------------------------------------------------------------


async def test_open_batches_pages_cover_each_open_batch_once(store: Store) -> None:
    job, batches = await a_job(store, 10, batch_size=2)
    now = datetime.now(UTC)
    partly = await claim(store, batches[0], now)
    await store.settle(partly.handle, [ok(ids(batches[0])[0])], now)
    closed = await store.close_batch(
        job.id, batches[1].id, TaskOutcome(TaskStatus.FAILED, error="x"), now
    )
    assert isinstance(closed, Settled)

    listed = await all_open_batches(store, job.id, page_size=2)
    assert [b.id for b in listed] == [
        b.id for b in sorted([batches[0], *batches[2:]], key=lambda b: (b is not batches[0], b.id))
    ]
    assert [i.status for i in listed[0].items] == [TaskStatus.SUCCEEDED, TaskStatus.RUNNING]
    assert [len(b.open_items) for b in listed] == [1, 2, 2, 2]
    assert await all_open_batches(store, uuid.uuid4().hex, page_size=2) == []


async def test_stuck_publishing_until_marked_published(store: Store) -> None:
    now = datetime.now(UTC)
    old, _ = await a_job(store, 2, created=now - timedelta(minutes=10), publishing=True)
    fresh, _ = await a_job(store, 2, created=now, publishing=True)
    done, _ = await a_job(store, 2, created=now - timedelta(minutes=10))
    cutoff = now - timedelta(minutes=5)

    stuck = {j.id for j in await store.stuck_publishing(cutoff, 1000)}
    assert old.id in stuck and fresh.id not in stuck and done.id not in stuck
    assert len(await store.stuck_publishing(cutoff, 1)) == 1

    await store.mark_published([old.id], now)
    assert old.id not in {j.id for j in await store.stuck_publishing(cutoff, 1000)}
    stored = await store.get_job(old.id)
    assert stored is not None and not stored.publishing and stored.updated_at == now


async def test_list_jobs_pages_newest_first_and_filters_by_status(store: Store) -> None:
    # A tenant of their own: the only jobs it lists in a shared emulator.
    tenant = uuid.uuid4().hex
    base = datetime(2200, 1, 1, 0, 0, 0, 123456, tzinfo=UTC)
    base += timedelta(minutes=random.randrange(10**6))
    jobs = [
        (await a_job(store, 1, created=base + timedelta(seconds=n), tenant=tenant))[0]
        for n in range(5)
    ]
    newest_first = [j.id for j in reversed(jobs)]
    # Jobs created at the same instant page in id order (newest first means highest id first).
    tied = [
        (await a_job(store, 1, created=base - timedelta(days=1), tenant=tenant))[0]
        for _ in range(3)
    ]
    tied_order = sorted((j.id for j in tied), reverse=True)
    now = datetime.now(UTC)
    for cancelled in (jobs[1], jobs[3]):
        assert await store.cancel_job(cancelled.id, now)

    async def first_ids(status: JobStatus | None, page_size: int, wanted: int) -> list[str]:
        seen: list[str] = []
        token: str | None = None
        while len(seen) < wanted:
            page = await store.list_jobs(status, PageRequest(page_size, token), tenant)
            assert len(page.items) <= page_size
            seen += [j.id for j in page.items]
            token = page.next_page_token
            if token is None:
                break
        return seen[:wanted]

    assert await first_ids(None, 2, 8) == newest_first + tied_order
    assert await first_ids(None, 1, 8) == newest_first + tied_order
    assert await first_ids(JobStatus.CANCELLED, 1, 2) == [jobs[3].id, jobs[1].id]
    assert await first_ids(JobStatus.QUEUED, 2, 3) == [jobs[4].id, jobs[2].id, jobs[0].id]
    page = await store.list_jobs(JobStatus.CANCELLED, PageRequest(1), tenant)
    assert page.items[0].status is JobStatus.CANCELLED and page.next_page_token is not None


# ---- cost ------------------------------------------------------------------------------------


async def test_a_claim_and_a_settle_of_fifty_tasks_cost_one_read(store: Store) -> None:
    job, [batch] = await a_job(store, 50)
    now = datetime.now(UTC)
    with counting() as ops:
        claimed = await claim(store, batch, now)
        settled = await store.settle(
            claimed.handle, [ok(t, n) for n, t in enumerate(ids(batch))], now
        )
    assert len(settled.finished) == 50 and settled.job_may_be_done
    assert await store.count_tasks(job.id) == tally(succeeded=50)
    if isinstance(store, FirestoreJobStore):
        # a claim without a token of a job that holds its batch: the batch, then the job
        assert ops.reads == (2 if holds_batch(store, job, [batch]) else 1)
        assert ops.writes <= 50 + 5  # + the outcome-stats shard in the settle commit


# ---- the processing lane (handoffs) ------------------------------------------------------


def handed(task_id: str, model_input: str = "# Page") -> HandOffTask:
    outcome = TaskOutcome(
        TaskStatus.SUCCEEDED,
        http_status=200,
        data={"title": "T", "": "an empty key", "nested": [[1, 2]]},
        fetched_at=datetime(2026, 11, 25, 12, 0, tzinfo=UTC),
        elapsed_ms=12,
        truncated_fields=("html",),
        field_errors={"price": "no match"},
    )
    return HandOffTask(task_id, Handoff(outcome, model_input))


async def test_a_hand_off_moves_the_task_to_processing_and_keeps_what_it_hands(
    store: Store,
) -> None:
    job, [batch] = await a_job(store, 3)
    a, b, c = ids(batch)
    t0 = datetime.now(UTC)
    claimed = await claim(store, batch, t0)
    settled = await store.settle(claimed.handle, [handed(a, "x" * 200_000), ok(b)], t0, t0)
    assert settled.finished == (b,) and not settled.job_may_be_done
    assert await store.count_tasks(job.id) == tally(processing=1, succeeded=1, running=1)
    handoffs = await store.handoffs(job.id, [a, b, "unknown"])
    assert list(handoffs) == [a]
    assert handoffs[a] == handed(a, "x" * 200_000).handoff  # every field, as handed
    assert await store.has_open_tasks(job.id)

    # the fetch lane's next delivery runs only c; the processing task keeps its attempt
    again = await claim(store, batch, t0 + 2 * LEASE)
    by_id = {item.task_id: item for item in again.batch.items}
    assert by_id[a].status is TaskStatus.PROCESSING and by_id[a].attempts == 1
    assert by_id[c].attempts == 2 and [i.task_id for i in again.batch.fetch_items] == [c]
    await store.settle(again.handle, [ok(c), handed(a, "again")], t0, t0)  # a: no longer running
    assert (await store.handoffs(job.id, [a]))[a].model_input == "x" * 200_000


async def test_the_processing_lane_finishes_a_handed_off_task(store: Store) -> None:
    job, [batch] = await a_job(store, 2)
    a, b = ids(batch)
    t0 = datetime.now(UTC)
    claimed = await claim(store, batch, t0)
    await store.settle(claimed.handle, [handed(a), ok(b)], t0, t0)

    processing = await store.claim_batch(
        BatchClaim(job.id, batch.id, t0, t0 + LEASE, lane="processing")
    )
    assert isinstance(processing, Claimed)
    assert [i.task_id for i in processing.batch.processing_items] == [a]
    assert all(i.attempts == 1 for i in processing.batch.items)  # processing counts none
    busy = await store.claim_batch(BatchClaim(job.id, batch.id, t0, t0 + LEASE))
    assert isinstance(busy, Busy)  # one delivery at a time, whichever lane
    released = await store.settle(processing.handle, [ReleaseTask(a, "model busy", True)], t0)
    assert not released.finished
    done = await store.settle(released.handle, [ok(a, 7)], t0, t0)
    assert done.finished == (a,) and done.job_may_be_done
    assert await store.count_tasks(job.id) == tally(succeeded=2)
    assert not await store.has_open_tasks(job.id)
    task = await store.get_task(job.id, a)
    assert task is not None and task.data == {"n": 7} and task.attempts == 1
    assert await store.handoffs(job.id, [a]) == {}  # dropped with the finish


async def test_a_lane_s_dead_letters_close_that_lane_s_tasks_only(store: Store) -> None:
    job, [batch] = await a_job(store, 2)
    a, b = ids(batch)
    t0 = datetime.now(UTC)
    claimed = await claim(store, batch, t0)
    await store.settle(claimed.handle, [handed(a), ReleaseTask(b, "HTTP 500")], t0, t0)
    dead = TaskOutcome(TaskStatus.DEAD_LETTERED)
    closed = await store.close_batch(job.id, batch.id, dead, t0, {TaskStatus.PROCESSING})
    assert isinstance(closed, Settled) and closed.finished == (a,)
    assert await store.count_tasks(job.id) == tally(dead_lettered=1, running=1)
    fetch = await store.close_batch(
        job.id, batch.id, dead, t0, {TaskStatus.QUEUED, TaskStatus.RUNNING}
    )
    assert isinstance(fetch, Settled) and fetch.finished == (b,)
    task = await store.get_task(job.id, b)
    assert task is not None and task.error == "HTTP 500"


@pytest.mark.parametrize("tasks", [1, 3])
async def test_pages_that_ran_without_a_charge_are_tallied_once(store: Store, tasks: int) -> None:
    """A page reused from the cache (no fetch) and a fetch that got no response cost nothing:
    the job's tally counts them (its tenant's quota gives them back), once whatever the
    redeliveries; a fetched page does not (one task: the job holds its batch)."""
    job, [batch] = await a_job(store, tasks)
    t0 = datetime.now(UTC)
    claimed = await claim(store, batch, t0)
    first, *others = ids(batch)
    finishes = [FinishTask(first, TaskOutcome(TaskStatus.SUCCEEDED, http_status=200))]
    if others:
        fetched = TaskOutcome(TaskStatus.SUCCEEDED, http_status=200, elapsed_ms=30)
        no_response = TaskOutcome(TaskStatus.FAILED, error="timeout")
        finishes += [FinishTask(others[0], fetched), FinishTask(others[1], no_response)]
    settled = await store.settle(claimed.handle, finishes, t0)
    await store.settle(settled.handle, finishes, t0)  # a retried commit
    found = await store.job_with_counts(job.id)
    assert found is not None
    assert found[0].uncharged == (2 if others else 1)
    assert found[0].ai_usage is None


async def test_the_ai_stage_s_usage_is_counted_once_per_finished_task(store: Store) -> None:
    job, [batch] = await a_job(store, 2)
    a, b = ids(batch)
    t0 = datetime.now(UTC)
    claimed = await claim(store, batch, t0)
    await store.settle(claimed.handle, [handed(a), handed(b)], t0, t0)
    processing = await store.claim_batch(
        BatchClaim(job.id, batch.id, t0, t0 + LEASE, lane="processing")
    )
    assert isinstance(processing, Claimed)
    spent = ModelUsage(calls=2, input_tokens=300, output_tokens=20)
    finish_a = FinishTask(a, TaskOutcome(TaskStatus.SUCCEEDED), usage=spent)
    first = await store.settle(processing.handle, [finish_a], t0, t0 + LEASE)
    # the same finish again (a retried commit), then b's answer from the cache
    finish_b = FinishTask(b, TaskOutcome(TaskStatus.SUCCEEDED), usage=ModelUsage(cached=1))
    await store.settle(first.handle, [finish_a, finish_b], t0)
    found = await store.job_with_counts(job.id)
    assert found is not None
    assert found[0].ai_usage == ModelUsage(calls=2, cached=1, input_tokens=300, output_tokens=20)
    plain, _ = await a_job(store, 1)
    listed = await store.job_with_counts(plain.id)
    assert listed is not None and listed[0].ai_usage is None


# --- finished jobs, replays, dead letters across jobs ---------------------------------------


async def test_jobs_finished_in_a_span(store: Store) -> None:
    ended_at = datetime(2033, 5, 5, tzinfo=UTC) + timedelta(seconds=random.randrange(10**6))
    job, _ = await a_job(store)
    assert await store.set_job_status(job.id, JobStatus.COMPLETED, ended_at)
    around = await store.finished_between(ended_at - timedelta(seconds=1), ended_at + LEASE, 50)
    assert [j.id for j in around] == [job.id] and around[0].finished_at == ended_at
    assert await store.finished_between(ended_at + LEASE, ended_at + 2 * LEASE, 50) == []


async def test_a_finished_task_is_never_released_again(store: Store) -> None:
    _, [batch] = await a_job(store, tasks=2)
    first = datetime.now(UTC)
    claimed = await claim(store, batch, first)
    a = claimed.batch.items[0].task_id
    settled = await store.settle(claimed.handle, [ok(a)], first)
    await store.settle(settled.handle, [ReleaseTask(a, "late", refund_attempt=True)], first)
    again = await claim(store, batch, first + LEASE + timedelta(seconds=1))
    finished = next(i for i in again.batch.items if i.task_id == a)
    assert finished.status is TaskStatus.SUCCEEDED
    assert finished.attempts == 1 and finished.error is None


async def test_replay_reopens_dead_letters_once_and_a_finished_job_runs_again(
    store: Store,
) -> None:
    job, [batch] = await a_job(store, tasks=2)
    first = datetime.now(UTC)
    claimed = await claim(store, batch, first)
    [a, b] = ids(claimed.batch)
    await store.settle(claimed.handle, [ok(a), ReleaseTask(b, "HTTP 500")], first)
    dead = TaskOutcome(TaskStatus.DEAD_LETTERED)
    await store.close_batch(job.id, batch.id, dead, first + LEASE + timedelta(seconds=1))
    assert await store.set_job_status(job.id, JobStatus.COMPLETED, datetime.now(UTC))
    letters = await store.tasks_with_status(
        TaskStatus.DEAD_LETTERED, TaskScope(job.id), PageRequest(10)
    )
    assert [t.id for t in letters.items] == [b] and letters.items[0].batch_id == batch.id
    assert letters.items[0].error == "HTTP 500"

    statuses = frozenset({TaskStatus.DEAD_LETTERED})
    reopened = await store.reopen(job.id, batch.id, [a, b], statuses, datetime.now(UTC))

    assert reopened is not None
    item = next(i for i in reopened.items if i.task_id == b)
    assert (item.status, item.attempts, item.replays) == (TaskStatus.QUEUED, 0, 1)
    assert next(i for i in reopened.items if i.task_id == a).status is TaskStatus.SUCCEEDED
    counts = await store.count_tasks(job.id)
    assert counts[TaskStatus.QUEUED] == 1 and counts[TaskStatus.DEAD_LETTERED] == 0
    assert (await store.get_job(job.id)).status is JobStatus.RUNNING  # type: ignore[union-attr]
    assert await store.reopen(job.id, batch.id, [b], statuses, datetime.now(UTC)) is None
    again = await claim(store, batch, datetime.now(UTC) + LEASE * 3)
    assert [i.task_id for i in again.batch.open_items] == [b]


async def test_dead_letters_of_every_job_page_newest_first_and_filter_by_host(
    store: Store,
) -> None:
    dead = TaskOutcome(TaskStatus.DEAD_LETTERED, error="HTTP 500")
    letters: list[str] = []
    for _ in range(3):
        _, [batch] = await a_job(store, tasks=1)
        at = datetime.now(UTC)
        claimed = await claim(store, batch, at)
        await store.settle(claimed.handle, [FinishTask(ids(claimed.batch)[0], dead)], at)
        letters.append(ids(claimed.batch)[0])
    seen: list[str] = []
    token = None
    while True:  # other tests' dead letters share the emulator: page until ours are all seen
        page = await store.tasks_with_status(
            TaskStatus.DEAD_LETTERED, TaskScope(), PageRequest(50, token)
        )
        seen += [t.id for t in page.items]
        token = page.next_page_token
        if token is None or set(letters) <= set(seen):
            break
    assert [i for i in seen if i in letters] == list(reversed(letters))
    elsewhere = "http~nowhere.example~80"
    other = await store.tasks_with_status(
        TaskStatus.DEAD_LETTERED, TaskScope(host=elsewhere), PageRequest(10)
    )
    assert other.items == []
    host = "http~a.example~80"  # the host key of every task a_job plans
    mine = await store.tasks_with_status(
        TaskStatus.DEAD_LETTERED, TaskScope(host=host), PageRequest(500)
    )
    assert set(letters) <= {t.id for t in mine.items}


async def test_dead_letters_of_one_tenant_are_a_query_of_their_own(store: Store) -> None:
    """A dead letter names its job's tenant: a tenant's list (with or without a host) holds
    its own, all of them, and none of another tenant's."""
    dead = TaskOutcome(TaskStatus.DEAD_LETTERED, error="HTTP 500")
    tenants = [f"t{uuid.uuid4().hex[:12]}", f"t{uuid.uuid4().hex[:12]}"]
    letters: dict[str, set[str]] = {t: set() for t in tenants}
    for tenant in [*tenants, tenants[0]]:
        job, batches = planned_job(tasks=2)
        batches = [replace(b, tenant=tenant) for b in batches]
        await store.create_job(replace(job, tenant=tenant), batches)
        at = datetime.now(UTC)
        claimed = await claim(store, batches[0], at)
        changes = [FinishTask(task, dead) for task in ids(claimed.batch)]
        await store.settle(claimed.handle, changes, at)
        letters[tenant] |= set(ids(claimed.batch))
    host = "http~a.example~80"
    for tenant in tenants:
        for by_host in (None, host):
            page = await store.tasks_with_status(
                TaskStatus.DEAD_LETTERED, TaskScope(None, by_host, tenant), PageRequest(50)
            )
            assert {t.id for t in page.items} == letters[tenant]
            assert {t.tenant for t in page.items} == {tenant}
    scope = TaskScope(tenant=tenants[0])
    first = await store.tasks_with_status(TaskStatus.DEAD_LETTERED, scope, PageRequest(2))
    assert first.next_page_token is not None
    rest = await store.tasks_with_status(
        TaskStatus.DEAD_LETTERED, scope, PageRequest(2, first.next_page_token)
    )
    assert {t.id for t in first.items + rest.items} == letters[tenants[0]]
