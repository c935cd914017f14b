"""WarmSlotGate: reuse of an instance's host slots, without breaking the shared limits."""

from __future__ import annotations

import asyncio
import random
from collections import Counter
from datetime import UTC, datetime, timedelta
from typing import Any

from scrapejobs_shared.adapters.memory.host_gate import MemoryHostGate
from scrapejobs_shared.politeness.host_gate import (
    SLOT_TAKES,
    SLOT_WINDOW,
    BreakerPolicy,
    HostLimits,
    Permit,
    Throttle,
)
from scrapejobs_shared.politeness.warm_slot_gate import WarmSlotGate, WarmSlotPolicy

HOST = "http~a.example~80"
T0 = datetime(2026, 11, 21, 12, 0, tzinfo=UTC)
LEASE = timedelta(seconds=40)
POLICY = WarmSlotPolicy(keep_s=20.0, idle_s=1.0, signals_ttl_s=1.0)


class Clock:
    def __init__(self) -> None:
        self.now = T0

    def __call__(self) -> datetime:
        return self.now

    def advance(self, seconds: float) -> None:
        self.now += timedelta(seconds=seconds)


class CountingGate:
    """The memory gate, counting the calls that would be round trips to the shared store."""

    def __init__(self, inner: MemoryHostGate) -> None:
        self.inner = inner
        self.calls: Counter[str] = Counter()

    def __getattr__(self, name: str) -> Any:
        method = getattr(self.inner, name)

        async def counted(*args: Any, **kwargs: Any) -> Any:
            self.calls[name] += 1
            return await method(*args, **kwargs)

        return counted


def build(shared: MemoryHostGate | None = None) -> tuple[WarmSlotGate, CountingGate, Clock]:
    clock = Clock()
    counting = CountingGate(shared or MemoryHostGate())
    return WarmSlotGate(counting, POLICY, clock), counting, clock


async def acquire(gate: WarmSlotGate, clock: Clock, concurrency: int = 8) -> Permit | Throttle:
    return await gate.acquire(HOST, HostLimits(concurrency), clock() + LEASE, clock())


async def test_a_released_slot_serves_the_next_fetch_without_touching_the_store() -> None:
    gate, counting, clock = build()
    first = await acquire(gate, clock)
    assert isinstance(first, Permit)
    await gate.release(first)
    for _ in range(5):
        clock.advance(0.1)
        again = await acquire(gate, clock)
        assert isinstance(again, Permit) and again.slot == first.slot
        await gate.release(again)
    assert counting.calls["acquire"] == 1 and counting.calls["release"] == 0
    assert counting.calls["signals"] == 0  # the grant's host document, trusted within its TTL
    clock.advance(1.0)  # past the TTL: a warm reuse reads the host document once
    for _ in range(3):
        again = await acquire(gate, clock)
        assert isinstance(again, Permit)
        await gate.release(again)
    assert counting.calls["signals"] == 1
    await gate.close()


async def test_slots_are_taken_with_a_lease_kept_longer_and_given_back_on_close() -> None:
    shared = MemoryHostGate()
    gate, counting, clock = build(shared)
    permit = await acquire(gate, clock)
    assert isinstance(permit, Permit)
    assert shared.slots[(HOST, permit.slot)][0] == clock() + LEASE + timedelta(seconds=20)
    await gate.release(permit)
    assert (HOST, permit.slot) in shared.slots  # warm: still this instance's
    await gate.close()
    assert shared.slots == {} and counting.calls["release"] == 1


async def test_an_idle_slot_is_given_back_so_other_instances_get_it() -> None:
    shared = MemoryHostGate()
    gate, _, clock = build(shared)
    other, _, other_clock = build(shared)
    limits = HostLimits(1)
    permit = await gate.acquire(HOST, limits, clock() + LEASE, clock())
    assert isinstance(permit, Permit)
    await gate.release(permit)
    blocked = await other.acquire(HOST, limits, other_clock() + LEASE, other_clock())
    assert isinstance(blocked, Throttle) and blocked.reason == "concurrency"
    clock.advance(1.0)
    await gate.sweep()
    granted = await other.acquire(HOST, limits, other_clock() + LEASE, other_clock())
    assert isinstance(granted, Permit)
    await other.close()


async def test_a_slot_that_would_rest_stays_warm_until_its_rest_is_over() -> None:
    """Given back after its fourth take in 10 s, a slot would rest, free for no one: the
    process keeps it warm, idle and wanted by another, for its own next fetches, and gives it
    back once the rest is over (turns at one host had spent every slot's takes, and both
    processes then waited out the rests)."""
    shared = MemoryHostGate(rests=True)
    clock = Clock()
    mine = WarmSlotGate(shared, POLICY, clock, process_id="mine")
    other = WarmSlotGate(shared, POLICY, clock, process_id="other")
    limits = HostLimits(1)
    for _ in range(SLOT_TAKES):
        permit = await mine.acquire(HOST, limits, clock() + LEASE, clock())
        assert isinstance(permit, Permit)
        await mine.release(permit)
        clock.advance(POLICY.idle_s)
        await mine.sweep()
    assert (HOST, 0) in shared.slots  # the fourth take's slot: kept, not resting in the store
    refused = await other.acquire(HOST, limits, clock() + LEASE, clock())
    assert isinstance(refused, Throttle) and refused.reason == "concurrency"
    clock.advance(POLICY.check_s)
    await mine.sweep()  # it learns that another waits: still kept
    again = await mine.acquire(HOST, limits, clock() + LEASE, clock())
    assert isinstance(again, Permit) and again.slot == 0  # its own next fetch uses it
    await mine.release(again)
    clock.now = T0 + SLOT_WINDOW
    await mine.sweep()  # the rest is over: given back, free at once
    assert (HOST, 0) not in shared.slots
    assert isinstance(await other.acquire(HOST, limits, clock() + LEASE, clock()), Permit)
    await mine.close()
    await other.close()


async def test_the_sweeper_gives_idle_slots_back_by_itself() -> None:
    shared = MemoryHostGate()
    now = datetime.now(UTC)
    gate = WarmSlotGate(shared, WarmSlotPolicy(idle_s=0.05), lambda: datetime.now(UTC))
    permit = await gate.acquire(HOST, HostLimits(2), now + LEASE, now)
    assert isinstance(permit, Permit)
    await gate.release(permit)
    for _ in range(50):
        if not shared.slots:
            break
        await asyncio.sleep(0.02)
    assert shared.slots == {}
    await gate.close()


async def test_a_warm_slot_whose_lease_cannot_cover_a_fetch_is_replaced() -> None:
    shared = MemoryHostGate()
    gate, counting, clock = build(shared)
    first = await acquire(gate, clock)
    assert isinstance(first, Permit)
    await gate.release(first)
    clock.advance(20.5)  # past keep_s: the kept lease no longer covers a whole fetch
    second = await acquire(gate, clock)
    assert isinstance(second, Permit) and second.token != first.token
    assert counting.calls["acquire"] == 2 and counting.calls["release"] == 1
    assert shared.slots[(HOST, second.slot)][1] == second.token
    await gate.close()


async def test_a_warm_slot_numbered_beyond_a_jobs_concurrency_is_not_used_for_it() -> None:
    shared = MemoryHostGate()
    gate, _, clock = build(shared)
    shared.occupy(HOST, 0, clock() + timedelta(hours=1))  # someone else holds slot 0
    wide = await acquire(gate, clock, concurrency=8)
    assert isinstance(wide, Permit) and wide.slot == 1
    await gate.release(wide)
    narrow = await acquire(gate, clock, concurrency=1)
    assert isinstance(narrow, Throttle)  # slot 1 is warm here, but this job allows only slot 0
    await gate.close()


async def test_slowly_spaced_hosts_bypass_warm_slots() -> None:
    shared = MemoryHostGate()
    gate, counting, clock = build(shared)
    limits = HostLimits(4, min_interval_s=2.5)  # one pace document (pace_grid.py)
    permit = await gate.acquire(HOST, limits, clock() + LEASE, clock())
    assert isinstance(permit, Permit)
    assert shared.slots[(HOST, permit.slot)][0] == clock() + LEASE  # no kept lease
    await gate.release(permit)
    assert shared.slots == {} and counting.calls["release"] == 1
    clock.advance(0.1)
    assert isinstance(await gate.acquire(HOST, limits, clock() + LEASE, clock()), Throttle)


async def on_the_grid(gate: WarmSlotGate, clock: Clock, limits: HostLimits) -> Permit:
    """A permit of a fast pace: an acquirer whose pick was an instant taken already is told
    the pace, and asks again after it."""
    while isinstance(
        answer := await gate.acquire(HOST, limits, clock() + LEASE, clock()), Throttle
    ):
        assert answer.reason == "rate"
        clock.advance(answer.wait_s)
    return answer


async def test_a_fast_pace_keeps_warm_slots_and_takes_an_instant_per_start() -> None:
    """A pace of 20 requests a second lies on a grid (pace_grid.py): a warm slot serves the
    next fetches with one call to the store each, for an instant of the grid, and no slot
    write."""
    shared = MemoryHostGate()
    gate, counting, clock = build(shared)
    limits = HostLimits(4, min_interval_s=0.05)
    first = await on_the_grid(gate, clock, limits)
    starts = [first.starts_at]
    await gate.release(first)
    for _ in range(5):
        clock.advance(0.01)
        again = await on_the_grid(gate, clock, limits)
        assert again.slot == first.slot and again.starts_at and again.starts_at >= clock()
        starts.append(again.starts_at)
        await gate.release(again)
    assert len(set(starts)) == len(starts)  # one start an instant
    assert counting.calls["acquire"] == 1 and "release" not in counting.calls
    assert counting.calls["take_instant"] >= 5
    await gate.close()


async def test_own_hold_and_breaker_apply_at_once_and_others_within_the_ttl() -> None:
    shared = MemoryHostGate()
    gate, _, clock = build(shared)
    permit = await acquire(gate, clock)
    assert isinstance(permit, Permit)
    await gate.release(permit)
    await gate.hold(HOST, clock() + timedelta(seconds=30))  # Retry-After seen here
    paused = await acquire(gate, clock)
    assert isinstance(paused, Throttle) and paused.reason == "rate"

    other, _, other_clock = build(shared)
    shared.next_at.clear()
    for _ in range(2):  # a fresh slot, then a warm reuse: the reuse reads the host document
        warm = await other.acquire(HOST, HostLimits(8), other_clock() + LEASE, other_clock())
        assert isinstance(warm, Permit)
        await other.release(warm)
    breaker = BreakerPolicy(failure_threshold=1, cooldown_s=60)
    await gate.record_failure(HOST, breaker, clock())  # another instance opens the circuit
    other_clock.advance(0.5)
    stale = await other.acquire(HOST, HostLimits(8), other_clock() + LEASE, other_clock())
    assert isinstance(stale, Permit)  # its host document is 0.5 s old: within the TTL
    await other.release(stale)
    other_clock.advance(0.6)
    fresh = await other.acquire(HOST, HostLimits(8), other_clock() + LEASE, other_clock())
    assert isinstance(fresh, Throttle) and fresh.reason == "circuit_open"
    await gate.close()
    await other.close()


async def test_a_reused_permit_carries_the_failure_streak_until_a_success_clears_it() -> None:
    shared = MemoryHostGate()
    gate, _, clock = build(shared)
    shared.failures[HOST] = 2
    permit = await acquire(gate, clock)
    assert isinstance(permit, Permit) and permit.failures == 2
    await gate.record_success(permit, clock())
    await gate.release(permit)
    again = await acquire(gate, clock)
    assert isinstance(again, Permit) and again.failures == 0
    assert shared.failures[HOST] == 0
    await gate.close()


async def test_instances_sharing_a_store_never_hold_more_slots_than_the_limit() -> None:
    shared = MemoryHostGate()
    clock = Clock()
    gates = [WarmSlotGate(shared, POLICY, clock) for _ in range(3)]
    rng = random.Random(7)
    out: list[tuple[WarmSlotGate, Permit]] = []
    for _ in range(2000):
        clock.advance(rng.choice([0.0, 0.05, 0.3, 2.5]))
        gate = rng.choice(gates)
        if out and rng.random() < 0.5:
            owner, permit = out.pop(rng.randrange(len(out)))
            await owner.release(permit)
        elif rng.random() < 0.2:
            await gate.sweep()
        else:
            result = await gate.acquire(HOST, HostLimits(3), clock() + LEASE, clock())
            if isinstance(result, Permit):
                out.append((gate, result))
        held = {permit.slot for _, permit in out}
        assert len(held) == len(out) <= 3
    for gate in gates:
        await gate.close()


async def test_a_failing_give_back_neither_fails_a_fetch_nor_stops_the_sweep(caplog) -> None:
    shared = MemoryHostGate()
    gate, counting, clock = build(shared)
    first = await acquire(gate, clock)
    assert isinstance(first, Permit)
    await gate.release(first)

    async def broken(permit: Permit) -> None:
        raise RuntimeError("store unavailable")

    counting.inner.release = broken  # type: ignore[method-assign]
    clock.advance(20.5)  # the warm slot must be replaced: giving it back fails
    second = await acquire(gate, clock)
    assert isinstance(second, Permit)
    await gate.release(second)
    clock.advance(1.0)
    await gate.sweep()  # fails to give back again, logs, carries on
    failures = [r for r in caplog.records if r.getMessage() == "giving a host slot back failed"]
    assert len(failures) == 2
    assert shared.slots[(HOST, second.slot)][1] == second.token  # still held: lease ends it


async def test_the_sweep_forgets_old_host_documents() -> None:
    clock = Clock()
    counting = CountingGate(MemoryHostGate())
    gate = WarmSlotGate(counting, WarmSlotPolicy(idle_s=5.0, signals_ttl_s=1.0), clock)
    for _ in range(2):  # a fresh slot (its grant: a fresh copy), then a warm reuse
        permit = await acquire(gate, clock)
        assert isinstance(permit, Permit)
        await gate.release(permit)
    assert counting.calls["signals"] == 0
    clock.advance(1.0)
    await gate.sweep()
    assert gate._signals == {}  # a worker meets millions of hosts: the cache must not keep them
    assert isinstance(await acquire(gate, clock), Permit)  # still warm: reads the document anew
    assert counting.calls["signals"] == 1


async def test_a_fresh_slot_costs_no_extra_read_of_the_host_document() -> None:
    gate, counting, clock = build()
    for n in range(5):  # a broad crawl: one page per host, no warm slot to reuse
        host = f"http~h{n}.example~80"
        permit = await gate.acquire(host, HostLimits(8), clock() + LEASE, clock())
        assert isinstance(permit, Permit)
        await gate.release(permit)
    assert counting.calls["acquire"] == 5 and counting.calls["signals"] == 0
    await gate.close()


async def take_all(gate: WarmSlotGate, clock: Clock, n: int, cap: int = 8) -> list[Permit]:
    permits = [await acquire(gate, clock, concurrency=cap) for _ in range(n)]
    assert all(isinstance(p, Permit) for p in permits)
    return [p for p in permits if isinstance(p, Permit)]


async def test_a_process_holding_every_slot_gives_others_their_share_once_it_sees_them() -> None:
    shared = MemoryHostGate()
    clock = Clock()
    busy = WarmSlotGate(CountingGate(shared), POLICY, clock, process_id="busy")
    counting = CountingGate(shared)
    waiting = WarmSlotGate(counting, POLICY, clock, process_id="waiting")
    held = await take_all(busy, clock, 8)
    refused = await acquire(waiting, clock)
    assert isinstance(refused, Throttle) and refused.reason == "concurrency"
    assert shared.wants[HOST]["waiting"] == clock() + timedelta(seconds=POLICY.want_s)

    clock.advance(POLICY.check_s)
    await busy.sweep()  # held for check_s, more than half the slots: looks for wanters
    for permit in held[:4]:  # beyond its share (8 // 2): back to the store, not kept warm
        await busy.release(permit)
    assert len([k for k in shared.slots if k[0] == HOST]) == 4
    for permit in held[4:]:  # within its share: kept warm for its own next fetch
        await busy.release(permit)
    assert len([k for k in shared.slots if k[0] == HOST]) == 4
    mine = await take_all(busy, clock, 4)  # its warm slots
    local = await acquire(busy, clock)  # a fifth: refused here, without asking the store
    assert isinstance(local, Throttle) and local.reason == "share"
    theirs = await take_all(waiting, clock, 4)
    assert {p.slot for p in mine}.isdisjoint(p.slot for p in theirs)
    assert isinstance(await acquire(waiting, clock), Throttle)  # the store holds at the cap
    await busy.close()
    await waiting.close()


async def test_idle_slots_others_wait_for_go_back_without_waiting_out_idle_s() -> None:
    shared = MemoryHostGate()
    clock = Clock()
    busy = WarmSlotGate(shared, POLICY, clock, process_id="busy")
    waiting = WarmSlotGate(shared, POLICY, clock, process_id="waiting")
    held = await take_all(busy, clock, 3, cap=4)
    await take_all(waiting, clock, 1, cap=4)
    assert isinstance(await acquire(waiting, clock, concurrency=4), Throttle)
    clock.advance(POLICY.check_s)
    await busy.sweep()
    for permit in held[1:]:  # within 4 // 2: kept warm, idle now
        await busy.release(permit)
    clock.advance(POLICY.contended_idle_s)
    await busy.sweep()  # others wait: idle slots go back long before idle_s
    assert len([k for k in shared.slots if k[0] == HOST]) == 2
    assert isinstance(await acquire(waiting, clock, concurrency=4), Permit)
    await busy.close()
    await waiting.close()


async def test_without_wanters_a_holder_never_looks_twice_within_check_s() -> None:
    shared = MemoryHostGate()
    clock = Clock()
    counting = CountingGate(shared)
    gate = WarmSlotGate(counting, POLICY, clock, process_id="alone")
    held = await take_all(gate, clock, 8)
    await gate.sweep()  # held for less than check_s: no look
    assert counting.calls["wanting"] == 0
    for _ in range(4):
        clock.advance(POLICY.check_s / 2)
        await gate.sweep()
    assert counting.calls["wanting"] == 2  # one look per check_s, each one read at most
    for permit in held:  # nobody waits: every slot stays warm
        await gate.release(permit)
    assert counting.calls["release"] == 0
    await gate.close()


async def test_a_process_refused_by_the_store_says_so_at_most_every_third_of_want_s() -> None:
    shared = MemoryHostGate()
    clock = Clock()
    busy = WarmSlotGate(shared, POLICY, clock, process_id="busy")
    counting = CountingGate(shared)
    waiting = WarmSlotGate(counting, POLICY, clock, process_id="waiting")
    await take_all(busy, clock, 2, cap=2)
    for _ in range(10):
        assert isinstance(await acquire(waiting, clock, concurrency=2), Throttle)
        clock.advance(0.2)
    assert counting.calls["want"] == 2  # at 0 s and at 1 s (want_s / 3)
    await busy.close()


async def test_a_process_whose_holding_ends_withdraws_its_want_at_once() -> None:
    """Holders keep to a share while a want lasts: a process that stops wanting the host (its
    slots went idle and back) ends its want then, not want_s later."""
    shared = MemoryHostGate()
    clock = Clock()
    busy = WarmSlotGate(shared, POLICY, clock, process_id="busy")
    short = WarmSlotGate(shared, POLICY, clock, process_id="short")
    mine = await take_all(short, clock, 1, cap=2)
    await take_all(busy, clock, 1, cap=2)
    assert isinstance(await acquire(short, clock, concurrency=2), Throttle)  # full: it says so
    assert shared.wants[HOST]["short"] > clock()
    await short.release(mine[0])
    clock.advance(POLICY.idle_s)
    await short.sweep()  # idle: given back, and the want ends now
    assert shared.wants[HOST]["short"] == clock()
    assert await shared.wanting(HOST, clock()) == frozenset()
    await busy.close()


async def test_the_sweeper_logs_the_store_operations_it_makes(caplog) -> None:
    """The sweeper's store work belongs to no batch: it is logged apart ("host slots swept"),
    so the benchmark can count it."""
    from scrapejobs_shared.observability.store_ops import count
    from scrapejobs_shared.politeness.warm_slot_gate import SWEPT

    class CountedRelease(MemoryHostGate):
        async def release(self, permit: Permit) -> None:
            count(writes=1)
            await super().release(permit)

    caplog.set_level("INFO")
    now = datetime.now(UTC)
    gate = WarmSlotGate(CountedRelease(), WarmSlotPolicy(idle_s=0.05), lambda: datetime.now(UTC))
    permit = await gate.acquire(HOST, HostLimits(2), now + LEASE, now)
    assert isinstance(permit, Permit)
    await gate.release(permit)
    for _ in range(50):
        if any(r.getMessage() == SWEPT for r in caplog.records):
            break
        await asyncio.sleep(0.02)
    [swept] = [r for r in caplog.records if r.getMessage() == SWEPT]
    assert swept.firestore_writes == 1 and swept.firestore_reads == 0  # type: ignore[attr-defined]
    await gate.close()


NAMES = ("ending", "going")  # a process whose batch ends, and one whose batch goes on


async def both_capped(ending: WarmSlotGate, going: WarmSlotGate, clock: Clock) -> list[Permit]:
    """Two processes hold half of a host's slots each and want more: each sees the other wait.
    Returns the permits of ``ending``."""
    held = await take_all(ending, clock, 4)
    await take_all(going, clock, 4)
    assert isinstance(await acquire(ending, clock), Throttle)  # the store is full: both say so
    assert isinstance(await acquire(going, clock), Throttle)
    clock.advance(POLICY.check_s)
    await ending.sweep()
    await going.sweep()
    capped = await acquire(going, clock)
    assert isinstance(capped, Throttle) and capped.reason == "share"
    return held


async def test_a_process_between_two_batches_stops_keeping_the_others_to_a_share() -> None:
    """A batch boundary: the process whose batch ended has every slot of the host idle; it
    withdraws its want and gives them back, and the process kept to its share sees that within
    ``capped_check_s`` and takes every slot (not half of them until the want runs out)."""
    shared, clock = MemoryHostGate(), Clock()
    ending, going = (WarmSlotGate(shared, POLICY, clock, process_id=p) for p in NAMES)
    for permit in await both_capped(ending, going, clock):
        await ending.release(permit)  # its batch ended: kept warm, within its share, idle
    clock.advance(max(POLICY.wanting_idle_s, POLICY.contended_idle_s))
    await ending.sweep()
    assert await shared.wanting(HOST, clock()) == frozenset({"going"})
    clock.advance(POLICY.capped_check_s)
    more = await take_all(going, clock, 4)
    assert len({p.slot for p in more}) == 4
    await ending.close()
    await going.close()


async def test_a_process_at_its_last_pages_withdraws_its_want_while_it_still_fetches() -> None:
    shared, clock = MemoryHostGate(), Clock()
    ending, going = (WarmSlotGate(shared, POLICY, clock, process_id=p) for p in NAMES)
    held = await both_capped(ending, going, clock)
    for permit in held[:2]:  # two lanes have nothing left; two still fetch
        await ending.release(permit)
    await ending.sweep()  # idle for no time yet: a lane of its own may still take them
    assert "ending" in {k for k, until in shared.wants[HOST].items() if until > clock()}
    clock.advance(POLICY.wanting_idle_s)
    await ending.sweep()
    assert shared.wants[HOST]["ending"] == clock()  # withdrawn, though it holds slots still
    await ending.close()
    await going.close()


async def test_a_process_kept_to_its_share_looks_again_at_most_every_capped_check_s() -> None:
    shared, clock = MemoryHostGate(), Clock()
    counting = CountingGate(shared)
    ending = WarmSlotGate(shared, POLICY, clock, process_id="ending")
    going = WarmSlotGate(counting, POLICY, clock, process_id="going")
    await both_capped(ending, going, clock)
    looks = counting.calls["wanting"]
    for _ in range(20):  # its lanes ask every 50 ms for one second; the other still waits
        clock.advance(0.05)
        refused = await acquire(going, clock)
        assert isinstance(refused, Throttle) and refused.reason == "share"
        assert refused.wait_s == POLICY.capped_check_s
    assert counting.calls["wanting"] - looks == 5  # one look per capped_check_s, one read each
    assert counting.calls["acquire"] == 5  # the store was asked for none of the capped lanes' tries
    await ending.close()
    await going.close()


async def test_take_warm_hands_an_idle_slot_over_only_when_acquire_would() -> None:
    """``take_warm`` is acquire's warm path without the store: the idle slot while this
    process's copy of the host document is fresh and shows no pause; else None (acquire then
    reads the document, or waits the pause out). A spacing host keeps no warm slot."""
    shared = MemoryHostGate()
    gate, counting, clock = build(shared)
    limits = HostLimits(8)
    assert gate.take_warm(HOST, limits, clock() + LEASE, clock()) is None  # none held yet
    first = await acquire(gate, clock)
    assert isinstance(first, Permit)
    await gate.release(first)
    clock.advance(0.1)
    taken = gate.take_warm(HOST, limits, clock() + LEASE, clock())
    assert taken is not None and taken.slot == first.slot
    assert gate.take_warm(HOST, limits, clock() + LEASE, clock()) is None  # it was the one
    await gate.release(taken)
    assert gate.take_warm(HOST, HostLimits(8, min_interval_s=1.0), clock() + LEASE, clock()) is None
    clock.advance(1.0)  # the host document's copy is stale: acquire reads it first
    assert gate.take_warm(HOST, limits, clock() + LEASE, clock()) is None
    again = await acquire(gate, clock)
    assert isinstance(again, Permit) and again.slot == first.slot
    await gate.release(again)
    await shared.hold(HOST, clock() + timedelta(seconds=30))  # Retry-After, seen on the next read
    clock.advance(1.0)
    assert isinstance(await acquire(gate, clock), Throttle)
    assert gate.take_warm(HOST, limits, clock() + LEASE, clock()) is None  # paused
    assert counting.calls["acquire"] == 1  # the store was asked once, for the first slot
    await gate.close()


async def test_a_turn_at_a_host_shorter_than_half_a_second_learns_of_a_waiting_process() -> None:
    """Two worker processes on one host: one holds every slot for a turn of 0.3 s (its two
    batches), the other's lanes wait. The holder learns of them within its turn and gives back
    what is beyond its share (with a look every 0.5 s it never did: the processes took every
    slot by turns, each turn ending before its holder looked)."""
    shared = MemoryHostGate()
    clock = Clock()
    busy = WarmSlotGate(shared, POLICY, clock, process_id="busy")
    waiting = WarmSlotGate(shared, POLICY, clock, process_id="waiting")
    held = await take_all(busy, clock, 8)
    assert isinstance(await acquire(waiting, clock), Throttle)  # it says it waits
    for _ in range(6):  # the turn: 0.3 s, swept as the sweeper does while others may wait
        clock.advance(0.05)
        await busy.sweep()
    for permit in held:
        await busy.release(permit)
    assert len([k for k in shared.slots if k[0] == HOST]) == 4  # its share, 8 // 2
    assert isinstance(await acquire(waiting, clock), Permit)
    await busy.close()
    await waiting.close()


async def test_a_process_refused_every_slot_keeps_its_want_while_it_sweeps_other_hosts() -> None:
    """A want ends when the process's holding of the host ends, not while it holds none of
    it because every slot was refused (its sweeper runs for the other hosts it holds)."""
    shared = MemoryHostGate()
    clock = Clock()
    busy = WarmSlotGate(shared, POLICY, clock, process_id="busy")
    waiting = WarmSlotGate(shared, POLICY, clock, process_id="waiting")
    await take_all(busy, clock, 8)
    other = await waiting.acquire("http~b.example~80", HostLimits(8), clock() + LEASE, clock())
    assert isinstance(other, Permit)  # a slot of another host: its sweeper has work
    assert isinstance(await acquire(waiting, clock), Throttle)
    clock.advance(0.05)
    await waiting.sweep()
    assert await shared.wanting(HOST, clock()) == frozenset({"waiting"})
    await busy.close()
    await waiting.close()
