"""The MonitorStore contract on the memory twin and the Firestore emulator."""

from __future__ import annotations

import asyncio
import dataclasses
import uuid
from collections.abc import AsyncIterator
from datetime import UTC, datetime, timedelta

import pytest
from google.cloud import firestore

from scrapejobs_shared.adapters.firestore.monitor_store import FirestoreMonitorStore
from scrapejobs_shared.adapters.memory.monitor_store import MemoryMonitorStore
from scrapejobs_shared.domain.monitors import MonitorRecord, MonitorRequest, MonitorStatus
from scrapejobs_shared.ports.monitor_store import MonitorStore

NOW = datetime.now(UTC).replace(microsecond=0)
LIMIT = 100  # monitors a tenant may keep


@pytest.fixture(params=["memory", pytest.param("firestore", marks=pytest.mark.emulators)])
async def monitors(request: pytest.FixtureRequest) -> AsyncIterator[MonitorStore]:
    if request.param == "memory":
        yield MemoryMonitorStore()
        return
    stack = request.getfixturevalue("stack")
    client = firestore.AsyncClient(project=stack.config.project_id)
    yield FirestoreMonitorStore(client)
    client.close()


def monitor(
    tenant: str,
    created_at: datetime,
    next_check_at: datetime | None = None,
    status: MonitorStatus = MonitorStatus.ACTIVE,
) -> MonitorRecord:
    request = MonitorRequest.model_validate(
        {
            "urls": ["https://shop.example/p/1", "https://shop.example/p/2"],
            "extract": {"price": {"css": ".price::text", "type": "float"}},
            "name": f"prices of {tenant}",
            "schedule": {"text": "every 30 minutes", "timezone": "Europe/Paris"},
            "rules": {"thresholds": {"price": {"relative": 0.01}}, "notify_when": ["price < 20"]},
            "status": status.value,
        },
        strict=False,
    )
    return MonitorRecord(
        id=f"mon_{uuid.uuid4().hex[:16]}",
        tenant=tenant,
        request=request,
        created_at=created_at,
        updated_at=created_at,
        next_check_at=next_check_at,
    )


def tenants() -> tuple[str, str]:
    return f"t-{uuid.uuid4().hex[:8]}", f"u-{uuid.uuid4().hex[:8]}"


async def test_a_monitor_is_kept_whole_and_seen_only_by_its_tenant(monitors: MonitorStore) -> None:
    tenant, other = tenants()
    made = monitor(tenant, NOW, NOW + timedelta(minutes=30))
    await monitors.create(made, LIMIT)
    assert await monitors.get(tenant, made.id) == made
    assert await monitors.get(other, made.id) is None
    assert await monitors.get(tenant, "mon_none") is None
    assert await monitors.get(tenant, "a/b") is None
    assert not await monitors.delete(other, made.id)
    assert await monitors.delete(tenant, made.id)
    assert await monitors.get(tenant, made.id) is None
    assert not await monitors.delete(tenant, made.id)


async def test_listing_is_newest_first_in_pages(monitors: MonitorStore) -> None:
    tenant, other = tenants()
    made = [monitor(tenant, NOW + timedelta(seconds=n)) for n in range(5)]
    for record in [*made, monitor(other, NOW)]:
        await monitors.create(record, LIMIT)
    newest_first = [record.id for record in reversed(made)]
    seen: list[str] = []
    token: str | None = None
    for _ in range(3):
        page, token = await monitors.listed(tenant, 2, token)
        seen += [record.id for record in page]
        if token is None:
            break
    assert seen == newest_first and token is None


async def test_a_save_from_a_stale_read_loses(monitors: MonitorStore) -> None:
    tenant, other = tenants()
    made = monitor(tenant, NOW)
    await monitors.create(made, LIMIT)
    renamed = dataclasses.replace(
        made,
        request=made.request.model_copy(update={"name": "renamed"}),
        updated_at=NOW + timedelta(seconds=1),
    )
    assert await monitors.save(renamed, read_at=made.updated_at)
    paused = dataclasses.replace(made, updated_at=NOW + timedelta(seconds=2))
    assert not await monitors.save(paused, read_at=made.updated_at)  # read before the rename
    assert not await monitors.save(dataclasses.replace(renamed, tenant=other), renamed.updated_at)
    found = await monitors.get(tenant, made.id)
    assert found is not None and found.name == "renamed"


async def test_due_answers_active_monitors_whose_time_came_soonest_first(
    monitors: MonitorStore,
) -> None:
    # far in the past, so that other tests' monitors (due now) come after these
    base = datetime(2001, 1, 1, tzinfo=UTC)
    tenant, _ = tenants()
    late = monitor(tenant, NOW, base + timedelta(minutes=2))
    early = monitor(tenant, NOW, base + timedelta(minutes=1))
    paused = monitor(tenant, NOW, base, status=MonitorStatus.PAUSED)
    future = monitor(tenant, NOW, datetime(2999, 1, 1, tzinfo=UTC))
    for record in (late, early, paused, future):
        await monitors.create(record, LIMIT)
    due = await monitors.due(base + timedelta(minutes=5), 10)
    assert [record.id for record in due] == [early.id, late.id]
    assert [record.id for record in await monitors.due(base + timedelta(minutes=5), 1)] == [
        early.id
    ]
    for record in (late, early, paused, future):
        await monitors.delete(tenant, record.id)


async def test_monitors_are_counted_per_tenant(monitors: MonitorStore) -> None:
    mine, theirs = tenants()
    assert await monitors.count_of(mine) == 0
    for n in range(3):
        await monitors.create(monitor(mine, NOW + timedelta(seconds=n)), LIMIT)
    await monitors.create(monitor(theirs, NOW), LIMIT)
    assert await monitors.count_of(mine) == 3 and await monitors.count_of(theirs) == 1


async def test_the_cap_holds_under_parallel_creates_and_a_delete_frees_a_place(
    monitors: MonitorStore,
) -> None:
    """The review's burst passed a cap of 100 with 300 creates (a count, then a create); here
    12 at once against a cap of 5, as 12 instances would send them (the dispatcher sends one
    tenant's creates one at a time per instance: monitor_service.py)."""
    mine, theirs = tenants()
    made = await asyncio.gather(
        *(monitors.create(monitor(mine, NOW + timedelta(seconds=n)), 5) for n in range(12))
    )
    assert sum(made) == 5 and await monitors.count_of(mine) == 5
    assert await monitors.create(monitor(theirs, NOW), 5)  # another tenant's cap
    kept, _ = await monitors.listed(mine, 1)
    assert await monitors.delete(mine, kept[0].id)
    assert not await monitors.delete(mine, kept[0].id)  # counted off once
    assert await monitors.create(monitor(mine, NOW), 5)
    assert not await monitors.create(monitor(mine, NOW), 5)
    assert {mine, theirs} <= set(await monitors.tenants(10_000))


async def test_due_reads_one_tenants_monitors(monitors: MonitorStore) -> None:
    base = datetime(2002, 1, 1, tzinfo=UTC)
    mine, theirs = tenants()
    for n, tenant in enumerate((mine, theirs, mine)):
        await monitors.create(monitor(tenant, NOW, base + timedelta(minutes=n)), LIMIT)
    due = await monitors.due(base + timedelta(minutes=5), 10, tenant=mine)
    assert [m.tenant for m in due] == [mine, mine]
