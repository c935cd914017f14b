"""The page cache contract on the memory twin and the Firestore emulator: a result settled with
``kept_under`` is indexed in the same commit (both settle paths: the plain commit and the
transaction a conflicting write forces), found while its page is young enough, replaced by a
later fetch, and not indexed when it did not succeed."""

from __future__ import annotations

import uuid
from collections.abc import AsyncIterator
from dataclasses import replace
from datetime import UTC, datetime, timedelta
from functools import partial

import pytest
from google.cloud import firestore

from scrapejobs_shared.adapters.firestore.job_store import FirestoreJobStore
from scrapejobs_shared.adapters.firestore.page_cache import FirestorePageCache
from scrapejobs_shared.adapters.memory.job_store import MemoryJobStore
from scrapejobs_shared.domain.batch_transitions import FinishTask
from scrapejobs_shared.domain.jobspec import JobSpec
from scrapejobs_shared.domain.records import BatchItem, BatchRecord, JobRecord, TaskOutcome
from scrapejobs_shared.domain.statuses import JobStatus, TaskStatus
from scrapejobs_shared.ports.batch_store import BatchClaim
from scrapejobs_shared.ports.job_store import Claimed, JobStore
from scrapejobs_shared.ports.page_cache import KeptPage, PageCache, page_key

OK = TaskOutcome(TaskStatus.SUCCEEDED, http_status=200, data={"markdown": "# Hi"})


@pytest.fixture(params=["memory", pytest.param("firestore", marks=pytest.mark.emulators)])
async def stores(
    request: pytest.FixtureRequest,
) -> AsyncIterator[tuple[JobStore, PageCache]]:
    if request.param == "memory":
        memory = MemoryJobStore()
        yield memory, memory
        return
    stack = request.getfixturevalue("stack")
    client = firestore.AsyncClient(project=stack.config.project_id)
    yield FirestoreJobStore(client), FirestorePageCache(client)
    client.close()


async def a_batch(store: JobStore, tasks: int) -> BatchRecord:
    now = datetime.now(UTC)
    job_id = uuid.uuid4().hex
    items = tuple(BatchItem(f"t{i}", f"https://a.example/{job_id}/{i}") for i in range(tasks))
    batch = BatchRecord(job_id, "b0", items, now, now + timedelta(days=1))
    job = JobRecord(job_id, JobStatus.QUEUED, JobSpec(), now, now, now + timedelta(days=1))
    await store.create_job(job, [batch])
    return batch


async def test_a_kept_result_is_indexed_with_it_and_found_while_young(stores) -> None:
    store, cache = stores
    batch = await a_batch(store, 3)
    keys = [page_key(item.url, JobSpec(), tenant="default") for item in batch.items]
    fetched = datetime.now(UTC).replace(microsecond=0) - timedelta(minutes=5)
    now = datetime.now(UTC)
    claim = await store.claim_batch(
        BatchClaim(batch.job_id, "b0", now, now + timedelta(seconds=30))
    )
    assert isinstance(claim, Claimed)
    failed = TaskOutcome(TaskStatus.FAILED, http_status=404, error="HTTP 404")
    changes = [
        FinishTask("t0", replace(OK, fetched_at=fetched), kept_under=keys[0]),
        FinishTask("t1", failed, kept_under=keys[1]),  # not a success: not kept
        FinishTask("t2", OK),  # not asked to be kept
    ]
    await store.settle(claim.handle, changes, now)

    found = await cache.get_many(keys, now - timedelta(hours=1))
    assert found == {keys[0]: KeptPage(batch.job_id, "t0", fetched)}
    assert await cache.get_many(keys, now - timedelta(minutes=1)) == {}  # fetched too long ago
    assert await cache.get_many([], now) == {}


async def test_the_transaction_path_indexes_too_and_a_later_fetch_replaces(stores) -> None:
    store, cache = stores
    first, second = await a_batch(store, 1), await a_batch(store, 1)
    key = page_key("https://a.example/same", JobSpec(), tenant="default")
    now = datetime.now(UTC)
    for batch in (first, second):
        claim = await store.claim_batch(
            BatchClaim(batch.job_id, "b0", now, now + timedelta(seconds=30))
        )
        assert isinstance(claim, Claimed)
        # a conflicting write first: the settle falls back to a transaction (Firestore)
        await store.settle(claim.handle, [], now, lease_until=now + timedelta(seconds=40))
        outcome = TaskOutcome(TaskStatus.SUCCEEDED, http_status=200, data={}, fetched_at=now)
        await store.settle(claim.handle, [FinishTask("t0", outcome, kept_under=key)], now)
    found = await cache.get_many([key], now - timedelta(hours=1))
    [(_, page)] = found.items()
    assert (page.job_id, page.task_id) == (second.job_id, "t0")


def test_the_key_is_decided_by_the_url_and_what_shapes_the_result() -> None:
    base = JobSpec.model_validate({"options": {"formats": ["markdown"]}})
    key = partial(page_key, tenant="default")
    url = "https://a.example/p"
    same = JobSpec.model_validate(
        {"options": {"formats": ["markdown"], "timeout_s": 5, "cache_max_age_s": 60}}
    )
    assert key(url, base) == key(url, same)  # how long to wait or reuse: not shaping
    others = {
        key("https://a.example/q", base),
        key(url, JobSpec.model_validate({"options": {"formats": ["html"]}})),
        key(
            url,
            JobSpec.model_validate(
                {"extract": {"h": {"css": "h1"}}, "options": {"formats": ["markdown"]}}
            ),
        ),
        key(
            url,
            JobSpec.model_validate({"options": {"formats": ["markdown"], "headers": {"X-A": "1"}}}),
        ),
        key(url, JobSpec.model_validate({"options": {"formats": ["markdown"], "render": True}})),
    }
    assert key(url, base) not in others and len(others) == 5
    assert page_key(url, base, tenant="team-b") != key(url, base)  # a tenant's own pages
