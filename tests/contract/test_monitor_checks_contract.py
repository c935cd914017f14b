"""The MonitorChecks contract on the memory twin and the Firestore emulator."""

from __future__ import annotations

import dataclasses
import uuid
from collections.abc import AsyncIterator
from datetime import UTC, datetime, timedelta

import pytest
from google.cloud import firestore

from scrapejobs_shared.adapters.firestore.monitor_checks import FirestoreMonitorChecks
from scrapejobs_shared.adapters.firestore.monitor_store import FirestoreMonitorStore
from scrapejobs_shared.adapters.memory.monitor_checks import MemoryMonitorChecks
from scrapejobs_shared.adapters.memory.monitor_store import MemoryMonitorStore
from scrapejobs_shared.domain.monitor_checks import (
    CheckPage,
    CheckRecord,
    CheckStatus,
    PageSnapshot,
    PageStatus,
    Seen,
)
from scrapejobs_shared.domain.monitors import MonitorRecord, MonitorRequest
from scrapejobs_shared.domain.page_validators import PageValidators
from scrapejobs_shared.ports.monitor_checks import MonitorChecks
from scrapejobs_shared.ports.monitor_store import MonitorStore
from scrapejobs_shared.ports.page import PageRequest

NOW = datetime.now(UTC).replace(microsecond=0)


@pytest.fixture(params=["memory", pytest.param("firestore", marks=pytest.mark.emulators)])
async def stores(
    request: pytest.FixtureRequest,
) -> AsyncIterator[tuple[MonitorStore, MonitorChecks]]:
    if request.param == "memory":
        twin = MemoryMonitorChecks()
        yield MemoryMonitorStore(twin), twin
        return
    stack = request.getfixturevalue("stack")
    client = firestore.AsyncClient(project=stack.config.project_id)
    yield FirestoreMonitorStore(client), FirestoreMonitorChecks(client)
    client.close()


@pytest.fixture
def checks(stores: tuple[MonitorStore, MonitorChecks]) -> MonitorChecks:
    return stores[1]


def check(monitor_id: str, created_at: datetime = NOW) -> CheckRecord:
    return CheckRecord(
        id=f"chk_{uuid.uuid4().hex}",
        monitor_id=monitor_id,
        tenant="team-a",
        trigger="manual",
        status=CheckStatus.QUEUED,
        created_at=created_at,
        job_id=f"job-{uuid.uuid4().hex[:8]}",
    )


def monitor_id() -> str:
    return f"mon_{uuid.uuid4().hex}"


async def test_a_check_is_added_once_listed_newest_first_and_marked(checks: MonitorChecks) -> None:
    mid = monitor_id()
    first, second = check(mid), check(mid, NOW + timedelta(seconds=1))
    assert await checks.add(first) and await checks.add(second)
    assert not await checks.add(dataclasses.replace(first, trigger="scheduled"))
    assert await checks.get(mid, first.id) == first
    assert await checks.get(monitor_id(), first.id) is None
    page, token = await checks.listed(mid, 1)
    assert [c.id for c in page] == [second.id] and token is not None
    rest, token = await checks.listed(mid, 1, token)
    assert [c.id for c in rest] == [first.id] and token is None
    await checks.mark(mid, first.id, CheckStatus.RUNNING)
    found = await checks.get(mid, first.id)
    assert found is not None and found.status is CheckStatus.RUNNING


async def test_open_checks_of_every_monitor_oldest_first(checks: MonitorChecks) -> None:
    old = NOW - timedelta(days=400)  # older than anything another test leaves open
    first, second = check(monitor_id(), old), check(monitor_id(), old + timedelta(seconds=1))
    done = dataclasses.replace(check(monitor_id(), old), status=CheckStatus.SKIPPED_OVERLAP)
    for made in (second, first, done):
        assert await checks.add(made)
    await checks.mark(first.monitor_id, first.id, CheckStatus.RUNNING)
    listed = [c for c in await checks.open_checks(50) if c.created_at < NOW - timedelta(days=300)]
    assert [(c.monitor_id, c.id) for c in listed] == [
        (first.monitor_id, first.id),
        (second.monitor_id, second.id),
    ]
    assert listed[0].status is CheckStatus.RUNNING and listed[0].tenant == "team-a"
    await checks.finish(dataclasses.replace(first, status=CheckStatus.COMPLETED), [])
    await checks.finish(dataclasses.replace(second, status=CheckStatus.FAILED), [])
    still = {c.id for c in await checks.open_checks(50)}
    assert not {first.id, second.id, done.id} & still


async def test_one_caller_at_a_time_compares_and_a_finished_check_stays(
    checks: MonitorChecks,
) -> None:
    mid = monitor_id()
    made = check(mid)
    await checks.add(made)
    assert await checks.claim(mid, made.id, NOW, NOW + timedelta(seconds=30)) == made
    assert await checks.claim(mid, made.id, NOW, NOW + timedelta(seconds=30)) is None
    later = NOW + timedelta(seconds=31)  # the lease lapsed: its holder died
    assert await checks.claim(mid, made.id, later, later + timedelta(seconds=30)) is not None

    new = CheckPage("https://shop.example/p/1", PageStatus.NEW, 200)
    changed = CheckPage(
        "https://shop.example/p/2",
        PageStatus.CHANGED,
        200,
        diff={"fields": {"price": {"previous": 10.5, "current": 9.99}}, "text": "-a\n+b"},
        notify=True,
    )
    held = CheckPage(
        "https://shop.example/p/3",
        PageStatus.CHANGED,
        200,
        diff={"fields": {}, "text": "-x\n+y"},
        held_back_by=("min_text_change",),
    )
    snapshot = PageSnapshot(
        "https://shop.example/p/2",
        made.id,
        Seen({"price": 9.99}, "b"),
        Seen({"price": 10.5}, "a"),
        PageValidators('"v2"', "Mon, 02 Nov 2026 10:00:00 GMT", "ab" * 32),
    )
    gone = PageSnapshot("https://shop.example/p/9", made.id, None, Seen({}, "old"))
    same = [CheckPage(f"https://shop.example/s/{n}", PageStatus.SAME, 200) for n in range(5)]
    done = dataclasses.replace(
        made,
        status=CheckStatus.COMPLETED,
        finished_at=later,
        summary={"total": 8, "new": 1, "changed": 2, "same": 5},
    )
    await checks.record(made, [new, changed], [snapshot, gone])
    await checks.record(made, [held], [])
    assert (await checks.get(mid, made.id) or made).status is CheckStatus.QUEUED
    await checks.finish(done, same)
    assert await checks.get(mid, made.id) == done
    assert await checks.claim(mid, made.id, later, later + timedelta(seconds=30)) is None
    await checks.mark(mid, made.id, CheckStatus.RUNNING)  # finished: stays
    found = await checks.get(mid, made.id)
    assert found is not None and found.status is CheckStatus.COMPLETED
    assert sorted(await checks.snapshot_entries(mid), key=lambda e: e.url) == [
        snapshot.entry,
        gone.entry,
    ]
    assert not gone.entry.remembered("chk_next") and gone.entry.remembered(made.id)
    assert snapshot.entry.validators == snapshot.validators
    urls = [snapshot.url, gone.url, "https://shop.example/none"]
    assert await checks.snapshots_of(mid, urls) == {snapshot.url: snapshot, gone.url: gone}

    everything, token = await checks.pages(mid, made.id, None, PageRequest(10))
    assert token is None
    assert {p.url for p in everything[:3]} == {new.url, changed.url, held.url}
    assert sorted(everything[3:], key=lambda p: p.url) == same  # the same ones last
    only, _ = await checks.pages(mid, made.id, PageStatus.CHANGED, PageRequest(10))
    assert {p.url: p for p in only} == {changed.url: changed, held.url: held}
    for size in (1, 2, 3):  # pages of every size, across the two kinds
        listed, token = await checks.pages(mid, made.id, None, PageRequest(size))
        while token is not None:
            more, token = await checks.pages(mid, made.id, None, PageRequest(size, token))
            listed += more
        assert listed == everything
    unchanged, token = await checks.pages(mid, made.id, PageStatus.SAME, PageRequest(3))
    rest, last = await checks.pages(mid, made.id, PageStatus.SAME, PageRequest(3, token))
    assert len(unchanged) == 3 and last is None and unchanged + rest == everything[3:]


async def test_a_deleted_monitor_takes_its_checks_and_snapshots(
    stores: tuple[MonitorStore, MonitorChecks],
) -> None:
    monitors, checks = stores
    request = MonitorRequest.model_validate(
        {"url": "https://shop.example/p/1", "name": "one", "schedule": {"text": "hourly"}},
        strict=False,
    )
    mid = monitor_id()
    await monitors.create(MonitorRecord(mid, "team-a", request, NOW, NOW, None), 100)
    made = check(mid)
    await checks.add(made)
    page = CheckPage("https://shop.example/p/1", PageStatus.NEW, 200)
    snapshot = PageSnapshot(page.url, made.id, Seen({}, "text"))
    await checks.record(made, [page], [snapshot])
    same = [CheckPage("https://shop.example/p/2", PageStatus.SAME)]
    await checks.finish(dataclasses.replace(made, status=CheckStatus.COMPLETED), same)
    assert await monitors.delete("team-a", mid)
    assert await checks.get(mid, made.id) is None
    assert await checks.snapshot_entries(mid) == []
    assert (await checks.pages(mid, made.id, None, PageRequest(10)))[0] == []


async def test_many_same_pages_are_kept_together_and_listed_whole(checks: MonitorChecks) -> None:
    """Same pages are kept in chunks of a bounded size: long URLs span several, and listing
    them in pages gives every one once, in key order."""
    mid = monitor_id()
    made = check(mid)
    await checks.add(made)
    long = "x" * 200
    same = [CheckPage(f"https://shop.example/{long}/{n}", PageStatus.SAME) for n in range(3000)]
    await checks.finish(dataclasses.replace(made, status=CheckStatus.COMPLETED), same)
    listed: list[CheckPage] = []
    token: str | None = None
    while True:
        page, token = await checks.pages(mid, made.id, PageStatus.SAME, PageRequest(500, token))
        listed += page
        if token is None:
            break
    assert len(listed) == 3000 and {p.url for p in listed} == {p.url for p in same}
    assert [p.key for p in listed] == sorted(p.key for p in same)
