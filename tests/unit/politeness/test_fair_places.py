"""Places at a host in one process, taken in turns by tenant, by priority within a tenant
(FairPlaces)."""

from __future__ import annotations

import asyncio

from scrapejobs_shared.politeness.fair_places import FairPlaces, rank_of


async def settle() -> None:
    """Let every woken waiter run (a handed-over place wakes its taker a few steps later)."""
    for _ in range(10):
        await asyncio.sleep(0)


async def test_a_freed_place_goes_to_the_next_tenant_in_turn_not_the_longest_line() -> None:
    places = FairPlaces(2)
    assert await places.acquire("x", 0) and await places.acquire("x", 0)
    assert places.locked() and not await places.acquire("y", 0)  # full, and no wait
    order: list[str] = []

    async def take(tenant: str) -> None:
        assert await places.acquire(tenant, 5)
        order.append(tenant)

    waiting = [asyncio.create_task(take("x")) for _ in range(6)]
    await settle()
    waiting.append(asyncio.create_task(take("y")))  # one lane of another tenant, last in line
    await settle()
    places.release()
    await settle()
    places.release()
    await settle()
    assert order == ["x", "y"]  # y did not wait behind x's six
    for _ in range(5):
        places.release()
        await settle()
    await asyncio.gather(*waiting)
    assert order == ["x", "y", "x", "x", "x", "x", "x"]


async def test_a_tenant_alone_takes_every_place_and_a_timed_out_waiter_blocks_nobody() -> None:
    places = FairPlaces(3)
    assert all([await places.acquire("x", 0) for _ in range(3)])
    assert not await places.acquire("y", 0.01)  # timed out: out of line
    places.release()
    assert await places.acquire("x", 0)  # the free place is not kept for y
    waiter = asyncio.create_task(places.acquire("y", 5))
    await settle()
    waiter.cancel()
    await asyncio.gather(waiter, return_exceptions=True)
    places.release()
    assert await places.acquire("z", 0)  # a cancelled waiter holds nothing either


async def test_within_a_tenant_a_higher_priority_lane_goes_first_then_arrival_order() -> None:
    places = FairPlaces(1)
    assert await places.acquire("x", 0)
    order: list[str] = []

    async def take(tenant: str, lane: str, name: str) -> None:
        assert await places.acquire(tenant, 5, rank_of(lane))
        order.append(name)

    waiting = []
    for tenant, lane, name in [
        ("x", "low", "x-low"),
        ("x", "normal", "x-normal-1"),
        ("y", "low", "y-low"),
        ("x", "high", "x-high"),
        ("x", "normal", "x-normal-2"),
        ("x", "render", "x-render"),  # not a priority: normal
    ]:
        waiting.append(asyncio.create_task(take(tenant, lane, name)))
        await settle()
    for _ in range(len(waiting)):
        places.release()
        await settle()
    await asyncio.gather(*waiting)
    # tenants in turns (x first: it waited first), x's most urgent first, arrival within a rank
    assert order == ["x-high", "y-low", "x-normal-1", "x-normal-2", "x-render", "x-low"]
