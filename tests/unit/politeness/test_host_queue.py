"""A worker's lanes share one queue per host: they ask the shared gate one at a time, wait out
one growing pause while the host is full, and a permit given back here goes to a waiting lane
at once."""

from __future__ import annotations

import asyncio
from datetime import UTC, datetime, timedelta

from scrapejobs_shared.adapters.memory.host_gate import MemoryHostGate
from scrapejobs_shared.politeness.admission import Politeness, PolitenessPolicy
from scrapejobs_shared.politeness.host_gate import HostLimits, Permit, Throttle
from scrapejobs_shared.politeness.robots_cache import RobotsCache
from scrapejobs_shared.politeness.warm_slot_gate import WarmSlotGate, WarmSlotPolicy
from support.worker_fakes import ScriptedFetcher

HOST = "http~a.example~80"
LEASE = timedelta(seconds=30)


class CountingGate(MemoryHostGate):
    def __init__(self) -> None:
        super().__init__()
        self.asks = 0
        self.in_flight = 0
        self.most_in_flight = 0

    async def acquire(self, host, limits, lease_until, now) -> Permit | Throttle:
        self.asks += 1
        self.in_flight += 1
        self.most_in_flight = max(self.most_in_flight, self.in_flight)
        try:
            await asyncio.sleep(0.01)  # a store round trip
            return await super().acquire(host, limits, lease_until, now)
        finally:
            self.in_flight -= 1


def politeness(gate: MemoryHostGate, max_wait_s: float) -> Politeness:
    policy = PolitenessPolicy(max_wait_s=max_wait_s)
    return Politeness(gate, RobotsCache(ScriptedFetcher(200)), policy, lambda: datetime.now(UTC))


async def test_lanes_ask_one_at_a_time_and_back_off_while_the_host_is_full() -> None:
    gate = CountingGate()
    limits = HostLimits(concurrency=8)
    for slot in range(8):  # another instance holds every slot
        gate.occupy(HOST, slot, datetime.now(UTC) + timedelta(minutes=5))
    polite = politeness(gate, max_wait_s=1.5)

    results = await asyncio.gather(*(polite.admit(HOST, limits, LEASE) for _ in range(8)))

    assert all(isinstance(r, Throttle) for r in results)
    assert gate.most_in_flight == 1
    # a pause of 0.2 s doubling to 0.5 s: a handful of asks in 1.5 s, not 8 lanes x 5 per second
    assert gate.asks <= 8, gate.asks


async def test_a_permit_given_back_goes_to_a_waiting_lane_at_once() -> None:
    gate = CountingGate()
    limits = HostLimits(concurrency=1)
    polite = politeness(gate, max_wait_s=5.0)
    first = await polite.admit(HOST, limits, LEASE)
    assert not isinstance(first, Throttle)

    waiting = asyncio.create_task(polite.admit(HOST, limits, LEASE))
    await asyncio.sleep(0.05)
    assert not waiting.done()
    await first.release()
    second = await asyncio.wait_for(waiting, timeout=1.0)

    assert not isinstance(second, Throttle)
    await second.release()
    assert polite._queues == {}  # nobody waits: the queue is dropped


async def test_no_wait_means_at_most_one_ask() -> None:
    gate = CountingGate()
    limits = HostLimits(concurrency=1)
    gate.occupy(HOST, 0, datetime.now(UTC) + timedelta(minutes=5))
    polite = politeness(gate, max_wait_s=0.0)
    assert isinstance(await polite.admit(HOST, limits, LEASE), Throttle)
    assert gate.asks == 1


class SlowRefusingGate(CountingGate):
    """The store: a slow round trip, and every slot of the host held elsewhere but this
    process's own (slot 0, taken first)."""

    async def acquire(self, host, limits, lease_until, now) -> Permit | Throttle:
        if self.asks == 0:
            return await super().acquire(host, limits, lease_until, now)
        self.asks += 1
        await asyncio.sleep(0.1)
        return Throttle(0.2, "concurrency")


class HandOver:
    """Wraps a gate: a permit given back is kept for this process's next ask (a warm slot)."""

    def __init__(self, inner: MemoryHostGate) -> None:
        self.inner = inner
        self.kept: list[Permit] = []

    async def acquire(self, host, limits, lease_until, now) -> Permit | Throttle:
        if self.kept:
            return self.kept.pop()
        return await self.inner.acquire(host, limits, lease_until, now)

    async def release(self, permit: Permit) -> None:
        self.kept.append(permit)

    def __getattr__(self, name: str):
        return getattr(self.inner, name)


async def test_a_permit_given_back_during_a_refused_ask_is_taken_without_a_pause() -> None:
    """A lane's ask of the store is under way (and will be refused) when another lane gives
    its permit back: the waiting lane takes that warm slot at once, not after the pause the
    refusal sets (the host-slot stall: the slot sat idle for the whole pause)."""
    store = SlowRefusingGate()
    gate = HandOver(store)
    polite = Politeness(
        gate,  # type: ignore[arg-type]
        RobotsCache(ScriptedFetcher(200)),
        PolitenessPolicy(max_wait_s=5.0),
        lambda: datetime.now(UTC),
    )
    limits = HostLimits(concurrency=8)
    held = await polite.admit(HOST, limits, LEASE)
    assert not isinstance(held, Throttle)
    asking = asyncio.create_task(polite.admit(HOST, limits, LEASE))  # asks the store: refused
    await asyncio.sleep(0.02)
    waiting = asyncio.create_task(polite.admit(HOST, limits, LEASE))  # queued behind it
    await asyncio.sleep(0.02)
    loop = asyncio.get_running_loop()
    given_back_at = loop.time()
    await held.release()  # while the store's answer is still on its way
    done, _ = await asyncio.wait({asking, waiting}, return_when=asyncio.FIRST_COMPLETED)
    took = loop.time() - given_back_at
    winner = done.pop().result()
    assert not isinstance(winner, Throttle)
    assert took < 0.15, took  # the store's round trip (0.1 s), not a 0.2 s pause on top
    for task in (asking, waiting):
        task.cancel()


async def test_a_jobs_priority_lane_orders_its_tenants_lanes_waiting_for_the_host() -> None:
    gate = CountingGate()
    limits = HostLimits(concurrency=1)
    polite = politeness(gate, max_wait_s=5.0)
    first = await polite.admit(HOST, limits, LEASE, tenant="x")
    assert not isinstance(first, Throttle)
    order: list[str] = []

    async def admitted(lane: str) -> None:
        held = await polite.admit(HOST, limits, LEASE, tenant="x", lane=lane)
        assert not isinstance(held, Throttle)
        order.append(lane)
        await held.release()

    waiting = [asyncio.create_task(admitted("low"))]
    await asyncio.sleep(0.05)
    waiting.append(asyncio.create_task(admitted("high")))  # later, but more urgent
    await asyncio.sleep(0.05)
    await first.release()
    await asyncio.wait_for(asyncio.gather(*waiting), timeout=2.0)
    assert order == ["high", "low"]


async def test_lanes_defer_at_once_while_the_host_is_paused_past_their_wait() -> None:
    """A pace the gate says lasts past what the lanes may wait (a job's one request every
    100 s): the first ask finds it, and every lane defers at once, with the time left, instead
    of holding its push until its wait runs out; no lane asks the store again."""
    gate = CountingGate()
    limits = HostLimits(concurrency=8, min_interval_s=100.0)
    polite = politeness(gate, max_wait_s=10.0)
    first = await polite.admit(HOST, limits, LEASE)
    assert not isinstance(first, Throttle)
    await first.release()  # the next request of the host may start 100 s after this one

    loop = asyncio.get_running_loop()
    started = loop.time()
    results = await asyncio.gather(*(polite.admit(HOST, limits, LEASE) for _ in range(4)))
    took = loop.time() - started

    assert all(isinstance(r, Throttle) and r.reason == "rate" for r in results)
    assert all(90 < r.wait_s <= 100 for r in results if isinstance(r, Throttle))
    assert took < 1.0, took  # not the 10 s each could have waited
    assert gate.asks == 2  # the first grant and the one refusal that set the pause


class SlowGate(CountingGate):
    """The store's gate, its answers as slow as ``delay_s`` (a store under load)."""

    def __init__(self) -> None:
        super().__init__()
        self.delay_s = 0.0

    async def acquire(self, host, limits, lease_until, now) -> Permit | Throttle:
        await asyncio.sleep(self.delay_s)
        return await super().acquire(host, limits, lease_until, now)


async def test_a_slot_given_back_is_taken_at_once_while_another_lane_asks_the_store() -> None:
    """A lane that finds one of the process's slots idle takes it without waiting for its
    turn to ask the store: the ask under way does not hold it up (nor is the store asked)."""
    store = SlowGate()
    gate = WarmSlotGate(store, WarmSlotPolicy(), lambda: datetime.now(UTC), "me")
    polite = Politeness(
        gate,
        RobotsCache(ScriptedFetcher(200)),
        PolitenessPolicy(max_wait_s=5.0),
        lambda: datetime.now(UTC),
    )
    limits = HostLimits(concurrency=2)
    first = await polite.admit(HOST, limits, LEASE)
    assert not isinstance(first, Throttle)

    store.delay_s = 0.5  # the next ask of the store is slow
    asking = asyncio.create_task(polite.admit(HOST, limits, LEASE))
    await asyncio.sleep(0.05)  # it holds the turn to ask, its answer under way
    await first.release()  # the slot stays warm in this process
    asks = store.asks
    warm = await polite.admit(HOST, limits, LEASE)

    assert not isinstance(warm, Throttle)
    assert warm.permit.slot == first.permit.slot
    assert not asking.done()  # granted while the slow ask is still under way
    assert store.asks == asks
    fresh = await asking
    assert not isinstance(fresh, Throttle) and fresh.permit.slot != warm.permit.slot
    await warm.release()
    await fresh.release()
