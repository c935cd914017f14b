"""The WorkerDirectory port (the workers view), on the Firestore emulator and the memory twin:
reports add up, a report rides along with a batch commit, only recent workers are listed, the
most recently heard from first."""

from __future__ import annotations

import uuid
from collections.abc import AsyncIterator
from dataclasses import dataclass, replace
from datetime import UTC, datetime, timedelta

import pytest
from google.cloud import firestore

from scrapejobs_shared.adapters.firestore.job_store import FirestoreJobStore
from scrapejobs_shared.adapters.firestore.workers import FirestoreWorkerDirectory
from scrapejobs_shared.adapters.memory.job_store import MemoryJobStore
from scrapejobs_shared.domain.batch_transitions import FinishTask
from scrapejobs_shared.domain.jobspec import JobSpec
from scrapejobs_shared.domain.records import BatchItem, BatchRecord, JobRecord, TaskOutcome
from scrapejobs_shared.domain.statuses import JobStatus, TaskStatus
from scrapejobs_shared.domain.workers import ProxyUse, WorkerBeat
from scrapejobs_shared.observability.store_ops import counting
from scrapejobs_shared.ports.batch_store import BatchClaim
from scrapejobs_shared.ports.job_store import Claimed, JobStore
from scrapejobs_shared.ports.workers import WorkerDirectory


@dataclass
class Adapters:
    store: JobStore
    workers: WorkerDirectory


@pytest.fixture(params=["memory", pytest.param("firestore", marks=pytest.mark.emulators)])
async def adapters(request: pytest.FixtureRequest) -> AsyncIterator[Adapters]:
    if request.param == "memory":
        store = MemoryJobStore()
        yield Adapters(store, store)
        return
    stack = request.getfixturevalue("stack")
    client = firestore.AsyncClient(project=stack.config.project_id)
    yield Adapters(FirestoreJobStore(client), FirestoreWorkerDirectory(client))
    client.close()


def a_beat(worker_id: str, seen_at: datetime, **counts: int) -> WorkerBeat:
    started = datetime(2026, 1, 1, tzinfo=UTC)
    return WorkerBeat(worker_id, "rev-1", started, seen_at, **counts)


async def test_reports_add_up_and_only_recent_workers_are_listed(adapters: Adapters) -> None:
    # far in the future: no other test's worker is heard from after this
    base = datetime(2040, 1, 1, tzinfo=UTC) + timedelta(days=uuid.uuid4().int % 10_000)
    busy, quiet = f"busy-{uuid.uuid4().hex[:6]}", f"quiet-{uuid.uuid4().hex[:6]}"
    await adapters.workers.report(a_beat(quiet, base - timedelta(minutes=10), pages=3))
    await adapters.workers.report(a_beat(busy, base, batches=1, pages=10, pages_in_flight=4))
    await adapters.workers.report(
        a_beat(busy, base + timedelta(seconds=1), batches=2, pages=5, batches_in_flight=1)
    )
    [seen] = await adapters.workers.seen_since(base - timedelta(minutes=5), 10)
    assert seen.worker_id == busy and seen.revision == "rev-1"
    assert (seen.batches, seen.pages) == (3, 15)
    assert (seen.batches_in_flight, seen.pages_in_flight) == (1, 0)  # as last reported
    assert seen.last_seen == base + timedelta(seconds=1)
    both = await adapters.workers.seen_since(base - timedelta(minutes=15), 10)
    assert [w.worker_id for w in both] == [busy, quiet]


async def test_a_report_rides_along_with_a_batch_commit(adapters: Adapters) -> None:
    now = datetime.now(UTC)
    job_id = uuid.uuid4().hex
    batch = BatchRecord(
        job_id, "b0", (BatchItem("t0", "http://h.example/0"),), now, now + timedelta(days=1)
    )
    job = JobRecord(
        id=job_id,
        status=JobStatus.QUEUED,
        spec=JobSpec(),
        created_at=now,
        updated_at=now,
        expire_at=now + timedelta(days=1),
        total=1,
    )
    await adapters.store.create_job(job, [batch])
    claim = await adapters.store.claim_batch(
        BatchClaim(job_id, "b0", now, now + timedelta(seconds=30))
    )
    assert isinstance(claim, Claimed)
    worker = f"w-{uuid.uuid4().hex[:6]}"
    change = FinishTask("t0", TaskOutcome(TaskStatus.SUCCEEDED), service_ms=5)
    with counting() as ops:
        settled = await adapters.store.settle(
            claim.handle, [change], now, None, a_beat(worker, now, batches=1, pages=7)
        )
    assert settled.finished == ("t0",)
    [seen] = [
        w
        for w in await adapters.workers.seen_since(now - timedelta(seconds=1), 200)
        if w.worker_id == worker
    ]
    assert seen.pages == 7 and seen.batches == 1
    if isinstance(adapters.store, FirestoreJobStore):
        assert ops.writes <= 5  # batch, counter, result, stats, and the report: one commit


async def test_a_worker_s_proxies_are_its_totals_as_last_reported(adapters: Adapters) -> None:
    base = datetime(2041, 1, 1, tzinfo=UTC) + timedelta(days=uuid.uuid4().int % 10_000)
    worker = f"proxied-{uuid.uuid4().hex[:6]}"
    first = (ProxyUse("http://de.example:3128", 3, 1),)
    later = (ProxyUse("http://de.example:3128", 7, 1), ProxyUse("socks5://[2001:db8::5]:1080", 2))
    await adapters.workers.report(replace(a_beat(worker, base, pages=3), proxies=first))
    await adapters.workers.report(
        replace(a_beat(worker, base + timedelta(seconds=1), pages=4), proxies=later)
    )
    [view] = [w for w in await adapters.workers.seen_since(base, 10) if w.worker_id == worker]
    assert view.proxies == later and view.pages == 7
