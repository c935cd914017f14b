"""The limits model's layouts of the host gate, the quota ledger and the held batches
(tools/scale: firestore_layout.py's ``HostGateLayout``, ``QuotaLedgerLayout`` and
``HeldBatchesLayout``) against their Firestore
adapters on the emulator: each call writes exactly the documents the layout says it writes for
the adapter's own answer (the documents created, deleted or whose update time moved). The job
store's layout has its own (test_firestore_layout_contract.py)."""

from __future__ import annotations

import uuid
from collections.abc import AsyncIterator, Awaitable, Callable
from datetime import UTC, date, datetime, timedelta
from typing import Any

import pytest
from google.cloud import firestore

from scrapejobs_scale.firestore_layout import (
    HeldBatchesLayout,
    HostGateLayout,
    Layout,
    QuotaLedgerLayout,
)
from scrapejobs_shared.adapters.firestore.held_batches import FirestoreHeldBatches
from scrapejobs_shared.adapters.firestore.host_gate import FirestoreHostGate
from scrapejobs_shared.adapters.firestore.job_store import FirestoreJobStore
from scrapejobs_shared.adapters.firestore.quota_ledger import FirestoreQuotaLedger
from scrapejobs_shared.adapters.memory.job_store import MemoryJobStore
from scrapejobs_shared.delivery.batching import batch_group
from scrapejobs_shared.politeness.host_gate import BreakerPolicy, HostLimits, Permit
from scrapejobs_shared.politeness.pace_grid import PaceGrid
from scrapejobs_shared.ports.quota_ledger import Reservation
from support.firestore_tree import changed_by, document_tree
from support.held_jobs import job_with_held_batches

pytestmark = pytest.mark.emulators

DAY = date(2026, 12, 3)
CONCURRENCY = HostLimits(4)
SLOW_PACE = HostLimits(4, min_interval_s=2.0)  # one request every 2 s: the host's next_at
FAST_PACE = HostLimits(4, min_interval_s=0.02)  # 50 a second: the pace grid's shards


@pytest.fixture
async def client(stack: Any) -> AsyncIterator[firestore.AsyncClient]:
    client = firestore.AsyncClient(project=stack.config.project_id)
    yield client
    client.close()


def said(layout: Layout, name: str, answer: Any, *args: Any) -> set[str]:
    """The documents the layout says ``name`` writes for this answer (its commits, flattened)."""
    return {path for commit in layout[name].commits(args, {}, answer) for path in commit}


async def checked(
    ref: Any, layout: Layout, method: Callable[..., Awaitable[Any]], name: str, *args: Any
) -> Any:
    """``method(*args)``'s answer, once the documents under ``ref`` it wrote were checked
    against the layout's ``name`` for that answer."""
    written, answer = await changed_by(lambda: document_tree(ref), lambda: method(*args))
    assert written == said(layout, name, answer, *args), name
    return answer


class Host:
    """A new host's documents on the emulator, and the gate's calls on them."""

    def __init__(self, client: firestore.AsyncClient) -> None:
        self.name = f"http~{uuid.uuid4().hex[:12]}.example~80"
        self.gate = FirestoreHostGate(client)
        self.layout = HostGateLayout().layout()
        self._ref = client.collection("hosts").document(self.name)

    async def call(self, name: str, *args: Any) -> Any:
        """The gate's ``name`` with ``args``, its writes checked against the layout's for its
        answer."""
        return await checked(self._ref, self.layout, getattr(self.gate, name), name, *args)

    async def acquire(self, limits: HostLimits, later_s: float = 0) -> Permit:
        now = datetime.now(UTC) + timedelta(seconds=later_s)
        lease = now + timedelta(seconds=40)
        args = (self.name, limits, lease, now)
        permit = await self.call("acquire", *args)
        assert isinstance(permit, Permit), permit
        return permit

    async def release(self, permit: Permit) -> None:
        await self.call("release", permit)


@pytest.mark.parametrize("limits", [CONCURRENCY, SLOW_PACE, FAST_PACE], ids=str)
async def test_a_permit_and_its_release_write_what_the_layout_says(
    client: firestore.AsyncClient, limits: HostLimits
) -> None:
    host = Host(client)
    for later_s in (0, 3):  # a new host, then one with documents (past a slow pace's 2 s)
        permit = await host.acquire(limits, later_s)
        await host.release(permit)


async def test_a_warm_slot_s_instant_writes_its_pace_shard_alone(
    client: firestore.AsyncClient,
) -> None:
    host = Host(client)
    permit = await host.acquire(FAST_PACE)
    assert PaceGrid.of(FAST_PACE) is not None
    now = datetime.now(UTC) + timedelta(seconds=1)
    instant = await host.call("take_instant", host.name, FAST_PACE, now)
    assert isinstance(instant, datetime)
    await host.release(permit)


async def test_failures_a_success_after_them_and_a_hold_write_the_host_document(
    client: firestore.AsyncClient,
) -> None:
    host = Host(client)
    clean = await host.acquire(CONCURRENCY)
    now = datetime.now(UTC)
    await host.call("record_success", clean, now)
    await host.release(clean)
    policy = BreakerPolicy(failure_threshold=5)
    for _ in range(2):
        await host.call("record_failure", host.name, policy, now)
    after = await host.acquire(CONCURRENCY)
    assert after.failures == 2
    await host.call("record_success", after, now)
    await host.release(after)
    until = now + timedelta(seconds=30)
    await host.call("hold", host.name, until)


async def test_a_reservation_and_its_releases_write_what_the_layout_says(
    client: firestore.AsyncClient,
) -> None:
    ledger, layout = FirestoreQuotaLedger(client), QuotaLedgerLayout().layout()
    tenant = f"t-{uuid.uuid4().hex[:8]}"
    day_ref = client.collection("quota_days").document(f"{tenant}~{DAY.isoformat()}")

    async def call(name: str, *args: Any) -> Any:
        return await checked(day_ref, layout, getattr(ledger, name), name, *args)

    wanted = [Reservation("a", 4), Reservation("b", 3)]
    assert await call("reserve", tenant, DAY, wanted, 10) == [True, True]
    await call("release", tenant, DAY, "a", 1)
    await call("release", tenant, DAY, "b", 3, True)  # final
    assert await ledger.reserved(tenant, DAY) == 3


async def test_held_batches_releases_waits_and_wakes_write_what_the_layout_says(
    client: firestore.AsyncClient,
) -> None:
    now = datetime.now(UTC)
    job, batches = job_with_held_batches(now)
    job_id = job.id
    await FirestoreJobStore(client).create_job(job, batches)
    held = FirestoreHeldBatches(client)
    layout = HeldBatchesLayout(MemoryJobStore()).layout()
    ref = client.collection("jobs").document(job_id)
    group = batch_group(batches[0])

    async def call(name: str, *args: Any) -> Any:
        return await checked(ref, layout, getattr(held, name), name, *args)

    assert await call("release_to_window", job_id, group, 2, now) == []  # full: no write
    assert len(await call("release_to_window", job_id, group, 4, now)) == 2
    assert len(await call("release", job_id, group, now, 1)) == 1
    assert await call("wait", batches[0], now + timedelta(seconds=60), 2, now)
    assert len(await call("wake", job_id, batches[0].id, now)) == 1
