"""The HostGate contract, on the real Firestore emulator and on the in-memory twin alike,
and warm slots over Firestore."""

from __future__ import annotations

import asyncio
import uuid
from collections.abc import AsyncIterator
from datetime import UTC, datetime, timedelta

import pytest
from google.cloud import firestore

from scrapejobs_shared.adapters.firestore import host_gate as host_gate_module
from scrapejobs_shared.adapters.firestore.host_gate import FirestoreHostGate
from scrapejobs_shared.adapters.memory.host_gate import MemoryHostGate
from scrapejobs_shared.observability.store_ops import counting
from scrapejobs_shared.politeness import host_gate as host_gate_port
from scrapejobs_shared.politeness.host_gate import (
    SLOT_TAKES,
    SLOT_WINDOW,
    BreakerPolicy,
    HostGate,
    HostLimits,
    Permit,
    Throttle,
)
from scrapejobs_shared.politeness.pace_grid import PaceGrid
from scrapejobs_shared.politeness.warm_slot_gate import WarmSlotGate, WarmSlotPolicy

LEASE = timedelta(seconds=40)


@pytest.fixture(params=["memory", pytest.param("firestore", marks=pytest.mark.emulators)])
async def gate(request: pytest.FixtureRequest) -> AsyncIterator[HostGate]:
    if request.param == "memory":
        yield MemoryHostGate(rests=True)
        return
    stack = request.getfixturevalue("stack")
    client = firestore.AsyncClient(project=stack.config.project_id)
    yield FirestoreHostGate(client)
    client.close()


def a_host() -> str:
    return f"http~{uuid.uuid4().hex[:12]}.example~80"


async def take(
    gate: HostGate, host: str, limits: HostLimits, later: timedelta = timedelta(0)
) -> Permit | Throttle:
    """An acquisition now, or ``later`` (past a slot's rest: ``later=SLOT_WINDOW``)."""
    now = datetime.now(UTC) + later
    return await gate.acquire(host, limits, now + LEASE, now)


@pytest.fixture
def slots_without_rest(monkeypatch: pytest.MonkeyPatch) -> None:
    """A slot given back is free at once (tests of what a look reads, not of the rest)."""
    monkeypatch.setattr(host_gate_port, "SLOT_WINDOW", timedelta(0))


async def test_concurrent_acquirers_get_at_most_the_limit(gate: HostGate) -> None:
    host = a_host()
    results = await asyncio.gather(*(take(gate, host, HostLimits(3)) for _ in range(8)))
    permits = [r for r in results if isinstance(r, Permit)]
    assert 1 <= len(permits) <= 3 and len({p.slot for p in permits}) == len(permits)
    assert (await gate.state(host, datetime.now(UTC))).in_flight == len(permits)
    for permit in permits:
        await gate.release(permit)
    assert (await gate.state(host, datetime.now(UTC))).in_flight == 0
    assert isinstance(await take(gate, host, HostLimits(3)), Permit)


async def test_a_released_slot_can_be_taken_again(gate: HostGate) -> None:
    host = a_host()
    first = await take(gate, host, HostLimits(1))
    assert isinstance(first, Permit)
    busy = await take(gate, host, HostLimits(1))
    assert isinstance(busy, Throttle) and busy.reason == "concurrency"
    await gate.release(first)
    assert isinstance(await take(gate, host, HostLimits(1)), Permit)


async def test_a_slot_s_takes_beyond_its_burst_rest_until_the_oldest_is_a_window_old(
    gate: HostGate,
) -> None:
    """A slot's document takes at most ``SLOT_TAKES`` takes in ``SLOT_WINDOW``: that many
    take and give back at once; given back after the last of them, the slot is busy (and
    counted in flight) until the first is ``SLOT_WINDOW`` old, free after."""
    host = a_host()
    for _ in range(SLOT_TAKES):
        permit = await take(gate, host, HostLimits(1))
        assert isinstance(permit, Permit)
        await gate.release(permit)
    resting = await take(gate, host, HostLimits(1))
    assert isinstance(resting, Throttle) and resting.reason == "concurrency"
    assert (await gate.state(host, datetime.now(UTC))).in_flight == 1
    almost = await take(gate, host, HostLimits(1), later=SLOT_WINDOW - timedelta(seconds=2))
    assert isinstance(almost, Throttle)
    assert isinstance(await take(gate, host, HostLimits(1), later=SLOT_WINDOW), Permit)


async def test_a_store_s_gate_keeps_no_slot_in_the_process(gate: HostGate) -> None:
    """Only a process's own gate (WarmSlotGate) holds slots idle: the store's hand none over
    without being asked, even one just given back."""
    host = a_host()
    first = await take(gate, host, HostLimits(1))
    assert isinstance(first, Permit)
    await gate.release(first)
    now = datetime.now(UTC)
    assert gate.take_warm(host, HostLimits(1), now + LEASE, now) is None
    assert isinstance(await take(gate, host, HostLimits(1)), Permit)


async def test_spacing_hold_and_breaker_show_in_signals(gate: HostGate) -> None:
    host = a_host()
    spaced = await take(gate, host, HostLimits(4, min_interval_s=30))
    assert isinstance(spaced, Permit)
    too_soon = await take(gate, host, HostLimits(4, min_interval_s=30))
    assert isinstance(too_soon, Throttle) and too_soon.reason == "rate"
    now = datetime.now(UTC)
    assert (signals := await gate.signals(host)).next_at is not None
    assert signals.throttle(now) is not None

    other = a_host()
    await gate.hold(other, now + timedelta(seconds=30))
    held = await take(gate, other, HostLimits(4))
    assert isinstance(held, Throttle) and held.reason == "rate"

    failing = a_host()
    policy = BreakerPolicy(failure_threshold=2, cooldown_s=60)
    await gate.record_failure(failing, policy, now)
    assert (await gate.signals(failing)).failures == 1
    await gate.record_failure(failing, policy, now)
    opened = await take(gate, failing, HostLimits(4))
    assert isinstance(opened, Throttle) and opened.reason == "circuit_open"
    assert (await gate.state(failing, now)).open_until is not None


async def test_a_fast_pace_gives_each_instant_of_its_grid_to_one_start(gate: HostGate) -> None:
    """A pace faster than a document takes (pace_grid.py) lies on a grid of instants, each
    taken by one start: 24 acquirers at once, among the next ``spread`` instants, get at most
    that many permits, each at its instant; the rest are told the pace."""
    host = a_host()
    limits = HostLimits(64, min_interval_s=0.05)
    grid = PaceGrid.of(limits)
    assert grid is not None and grid.shards == 40 and grid.spread == 10
    answers = await asyncio.gather(*(take(gate, host, limits) for _ in range(24)))
    permits = [a for a in answers if isinstance(a, Permit)]
    assert 1 <= len(permits) <= grid.spread
    assert any(isinstance(a, Throttle) and a.reason == "rate" for a in answers)
    # past the rest of a slot that a new host's few slot documents gave four refused starts
    state = await gate.state(host, datetime.now(UTC) + SLOT_WINDOW)
    assert state.in_flight == len(permits)  # a start refused its instant gave its slot back
    assert (await gate.signals(host)).next_at is None  # the host's document stays unwritten
    starts = [p.starts_at for p in permits]
    assert all(starts) and len(set(starts)) == len(starts)  # one start an instant

    # a warm slot's instants: the same grid, no slot (a second on, past the permits' instants)
    now = max(p.starts_at for p in permits if p.starts_at) + timedelta(seconds=1)
    instants = await asyncio.gather(*(gate.take_instant(host, limits, now) for _ in range(24)))
    taken = [i for i in instants if isinstance(i, datetime)]
    assert 1 <= len(taken) <= grid.spread and len(set(taken)) == len(taken)
    assert all(i >= now for i in taken)
    slow = HostLimits(4, min_interval_s=30)
    assert await gate.take_instant(host, slow, now) == now  # no grid: now


async def test_many_failures_at_once_open_the_breaker_quickly(gate: HostGate) -> None:
    """Every lane of a batch can fail one host at the same moment: each failure is one write
    that never waits on the others (on Firestore it was a transaction per failure: 16 at once
    ran into the emulator's lock timeouts and some gave up, raising)."""
    host = a_host()
    now = datetime.now(UTC)
    policy = BreakerPolicy(failure_threshold=5, cooldown_s=60)
    await asyncio.gather(*(gate.record_failure(host, policy, now) for _ in range(16)))
    opened = await take(gate, host, HostLimits(4))
    assert isinstance(opened, Throttle) and opened.reason == "circuit_open"
    assert (await gate.signals(host)).failures < 5  # counted again from zero when it opened


async def test_wanters_are_seen_until_their_want_ends(gate: HostGate) -> None:
    host, other_host = a_host(), a_host()
    now = datetime.now(UTC)
    assert await gate.wanting(host, now) == frozenset()
    await gate.want(host, "p1", now + timedelta(seconds=3))
    await gate.want(host, "p2", now + timedelta(seconds=1))
    await gate.want(other_host, "p3", now + timedelta(seconds=3))
    assert await gate.wanting(host, now) == {"p1", "p2"}
    assert await gate.wanting(host, now + timedelta(seconds=2)) == {"p1"}
    await gate.want(host, "p2", now + timedelta(seconds=10))  # refreshed while still waiting
    assert await gate.wanting(host, now + timedelta(seconds=5)) == {"p2"}
    assert await gate.wanting(other_host, now) == {"p3"}


@pytest.mark.emulators
async def test_a_look_for_wanters_costs_one_read_and_a_want_one_write(stack: object) -> None:
    client = firestore.AsyncClient(project=stack.config.project_id)  # type: ignore[attr-defined]
    gate = FirestoreHostGate(client)
    host = a_host()
    now = datetime.now(UTC)
    try:
        with counting() as ops:
            await gate.want(host, "p1", now + timedelta(seconds=3))
            assert await gate.wanting(host, now) == {"p1"}
        assert (ops.reads, ops.writes) == (1, 1)
    finally:
        client.close()


@pytest.mark.emulators
async def test_warm_slots_on_firestore_are_reused_and_given_back(stack: object) -> None:
    client = firestore.AsyncClient(project=stack.config.project_id)  # type: ignore[attr-defined]
    inner = FirestoreHostGate(client)
    warm = WarmSlotGate(inner, WarmSlotPolicy(idle_s=30), lambda: datetime.now(UTC))
    host = a_host()
    try:
        first = await take(warm, host, HostLimits(1))
        assert isinstance(first, Permit)
        await warm.release(first)
        assert (await inner.state(host, datetime.now(UTC))).in_flight == 1  # kept warm
        assert isinstance(await take(inner, host, HostLimits(1)), Throttle)  # not for others
        again = await take(warm, host, HostLimits(1))
        assert isinstance(again, Permit) and again.token == first.token  # no new write
        await warm.release(again)
        await warm.close()  # given back: free at once (its first take)
        assert (await inner.state(host, datetime.now(UTC))).in_flight == 0
        assert isinstance(await take(inner, host, HostLimits(1)), Permit)
    finally:
        await warm.close()
        client.close()


async def _fill(gate: HostGate, host: str, slots: int) -> list[Permit]:
    permits = [await take(gate, host, HostLimits(slots)) for _ in range(slots)]
    assert all(isinstance(p, Permit) for p in permits)
    return [p for p in permits if isinstance(p, Permit)]


@pytest.mark.emulators
@pytest.mark.usefixtures("slots_without_rest")
async def test_a_full_host_is_refused_for_a_few_reads_not_one_per_slot(
    stack: object, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Once an instance has seen every slot document of a host, a look at the host's other
    slots is one query for free ones (billed as what it returns, at least one document); a
    host it found full a moment ago is queried straight away."""
    client = firestore.AsyncClient(project=stack.config.project_id)  # type: ignore[attr-defined]
    gate = FirestoreHostGate(client)
    host = a_host()
    try:
        permits = await _fill(gate, host, 8)
        with counting() as first:  # reads every slot document: learns they all exist
            assert isinstance(await take(gate, host, HostLimits(8)), Throttle)
        assert first.reads == 2 + 8
        with counting() as again:  # found full a moment ago: the host document and the query
            refused = await take(gate, host, HostLimits(8))
        assert isinstance(refused, Throttle) and refused.reason == "concurrency"
        assert again.reads == 2
        monkeypatch.setattr(host_gate_module, "FULL_FOR", timedelta(0))  # "a moment" is over
        with counting() as later:  # the host document, a random slot, the query
            assert isinstance(await take(gate, host, HostLimits(8)), Throttle)
        assert later.reads == 3
        freed = permits[3]
        await gate.release(freed)
        again = await take(gate, host, HostLimits(8))  # another instance's release, found
        assert isinstance(again, Permit) and again.slot == freed.slot
    finally:
        client.close()


@pytest.mark.emulators
@pytest.mark.usefixtures("slots_without_rest")
async def test_free_slots_a_look_found_are_taken_next_without_a_read(stack: object) -> None:
    client = firestore.AsyncClient(project=stack.config.project_id)  # type: ignore[attr-defined]
    holder, other = FirestoreHostGate(client), FirestoreHostGate(client)
    host = a_host()
    try:
        permits = await _fill(holder, host, 8)
        assert isinstance(await take(other, host, HostLimits(8)), Throttle)  # learns: all exist
        for permit in permits[:4]:
            await holder.release(permit)
        with counting() as first:  # found full a moment ago: the host document and the query
            taken = [await take(other, host, HostLimits(8))]
        assert first.reads == 1 + 4
        with counting() as next_three:
            taken += [await take(other, host, HostLimits(8)) for _ in range(3)]
        assert next_three.reads == 0 and next_three.writes == 3
        assert all(isinstance(p, Permit) for p in taken)
        assert sorted(p.slot for p in taken if isinstance(p, Permit)) == sorted(
            p.slot for p in permits[:4]
        )
        assert isinstance(await take(holder, host, HostLimits(8)), Throttle)  # still the cap
    finally:
        client.close()


@pytest.mark.emulators
@pytest.mark.usefixtures("slots_without_rest")
async def test_a_spare_slot_someone_else_took_is_a_lost_race_not_a_second_holder(
    stack: object,
) -> None:
    client = firestore.AsyncClient(project=stack.config.project_id)  # type: ignore[attr-defined]
    holder, other = FirestoreHostGate(client), FirestoreHostGate(client)
    host = a_host()
    try:
        permits = await _fill(holder, host, 4)
        assert isinstance(await take(other, host, HostLimits(4)), Throttle)
        for permit in permits[:2]:
            await holder.release(permit)
        first = await take(other, host, HostLimits(4))  # keeps the second free slot as spare
        assert isinstance(first, Permit)
        sneaky = await take(holder, host, HostLimits(4))  # the holder takes that slot first
        assert isinstance(sneaky, Permit)
        late = await take(other, host, HostLimits(4))  # its spare is stale: refused
        assert isinstance(late, Throttle) and late.reason == "concurrency"
        assert (await holder.state(host, datetime.now(UTC))).in_flight == 4
    finally:
        client.close()


@pytest.mark.emulators
@pytest.mark.usefixtures("slots_without_rest")
async def test_a_host_never_seen_costs_one_read_and_a_known_one_still_works(stack: object) -> None:
    client = firestore.AsyncClient(project=stack.config.project_id)  # type: ignore[attr-defined]
    first, second = FirestoreHostGate(client), FirestoreHostGate(client)
    host = a_host()
    try:
        with counting() as fresh:  # no slot document yet: the host document, a blind create
            permit = await take(first, host, HostLimits(1))
        assert isinstance(permit, Permit) and (fresh.reads, fresh.writes) == (1, 1)
        with counting() as taken:  # new to this instance, but its only slot is held: refused
            refused = await take(second, host, HostLimits(1))
        assert isinstance(refused, Throttle) and refused.reason == "concurrency"
        assert taken.reads >= 2  # the blind create failed: the usual look followed
        await first.release(permit)
        again = await take(second, host, HostLimits(1))  # the released slot document exists
        assert isinstance(again, Permit) and again.slot == permit.slot
        assert (await first.state(host, datetime.now(UTC))).in_flight == 1
    finally:
        client.close()


@pytest.mark.emulators
@pytest.mark.usefixtures("slots_without_rest")
async def test_a_smaller_limit_never_gets_a_slot_beyond_it(stack: object) -> None:
    client = firestore.AsyncClient(project=stack.config.project_id)  # type: ignore[attr-defined]
    gate = FirestoreHostGate(client)
    host = a_host()
    try:
        permits = {p.slot: p for p in await _fill(gate, host, 8)}
        assert isinstance(await take(gate, host, HostLimits(8)), Throttle)  # all exist: known
        await gate.release(permits[5])
        for _ in range(5):
            assert isinstance(await take(gate, host, HostLimits(2)), Throttle)
        await gate.release(permits[1])
        small = await take(gate, host, HostLimits(2))
        assert isinstance(small, Permit) and small.slot == 1
    finally:
        client.close()


@pytest.mark.emulators
@pytest.mark.usefixtures("slots_without_rest")
async def test_free_slots_beyond_a_smaller_limit_do_not_hide_one_under_it(
    stack: object, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The query returns released slots (the epoch) before expired leases: when its answer is
    all slots beyond the job's limit, the slots under it are read one by one."""
    monkeypatch.setattr(host_gate_module.random, "shuffle", lambda _slots: None)  # slot order
    client = firestore.AsyncClient(project=stack.config.project_id)  # type: ignore[attr-defined]
    gate = FirestoreHostGate(client)
    host = a_host()
    try:
        now = datetime.now(UTC)
        permits = []
        for slot in range(8):  # slot 1's lease ends in 1 s; the others' in 40 s
            lease_until = now + (timedelta(seconds=1) if slot == 1 else LEASE)
            permit = await gate.acquire(host, HostLimits(8), lease_until, now)
            assert isinstance(permit, Permit) and permit.slot == slot
            permits.append(permit)
        assert isinstance(await take(gate, host, HostLimits(8)), Throttle)  # all exist: known
        for permit in permits[2:]:
            await gate.release(permit)
        await asyncio.sleep(1.2)
        small = await take(gate, host, HostLimits(2))  # slot 0 busy, slot 1's lease over
        assert isinstance(small, Permit) and small.slot == 1
    finally:
        client.close()


async def test_an_explicit_replay_closes_an_open_breaker_and_failures_reopen_it(
    gate: HostGate,
) -> None:
    host = a_host()
    now = datetime.now(UTC)
    policy = BreakerPolicy(failure_threshold=2, cooldown_s=60)
    assert await gate.close_breaker(host, now) is False  # never opened: nothing to close
    for _ in range(2):
        await gate.record_failure(host, policy, now)
    assert isinstance(await take(gate, host, HostLimits(4)), Throttle)
    assert await gate.close_breaker(host, now) is True
    state = await gate.state(host, now)
    assert state.open_until is None and state.failures == 0
    permit = await take(gate, host, HostLimits(4))
    assert isinstance(permit, Permit)
    await gate.release(permit)
    for _ in range(2):
        await gate.record_failure(host, policy, now)
    assert isinstance(await take(gate, host, HostLimits(4)), Throttle)
