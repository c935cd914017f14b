"""An instance's uploads: held from before their bodies are read (a bounded number, one
tenant at most half of them), read in the tenants' turns (the review: one member's slow
uploads made another tenant's small one wait for all of them)."""

from __future__ import annotations

import asyncio

import pytest

from scrapejobs_dispatcher.uploads.upload_slots import TenantUploadsBusy, UploadsBusy, UploadSlots


async def test_a_queued_upload_of_another_tenant_is_read_first() -> None:
    slots = UploadSlots(reading=1, held=10)
    order: list[str] = []
    release = asyncio.Event()

    async def upload(tenant: str, name: str) -> None:
        async with slots.turn(tenant):
            order.append(name)
            await release.wait()

    first = asyncio.create_task(upload("team-a", "a1"))
    await asyncio.sleep(0)
    waiting = [asyncio.create_task(upload("team-a", f"a{n}")) for n in (2, 3, 4)]
    await asyncio.sleep(0)
    waiting.append(asyncio.create_task(upload("team-b", "b1")))
    await asyncio.sleep(0)
    release.set()
    await asyncio.gather(first, *waiting)
    assert order == ["a1", "a2", "b1", "a3", "a4"]  # b1 waited for one of team-a's, not three


async def test_a_cancelled_wait_gives_its_turn_on() -> None:
    slots = UploadSlots(reading=1, held=10)
    release = asyncio.Event()
    done: list[str] = []

    async def upload(tenant: str) -> None:
        async with slots.turn(tenant):
            await release.wait()
            done.append(tenant)

    holder = asyncio.create_task(upload("team-a"))
    await asyncio.sleep(0)
    gone, after = asyncio.create_task(upload("team-b")), asyncio.create_task(upload("team-c"))
    await asyncio.sleep(0)
    gone.cancel()
    release.set()
    await asyncio.gather(holder, after)
    assert done == ["team-a", "team-c"]


def test_an_instance_holds_a_bounded_number_and_a_tenant_half_of_them() -> None:
    slots = UploadSlots(reading=1, held=4)
    with slots.holding("team-a"), slots.holding("team-a"):
        with pytest.raises(TenantUploadsBusy) as mine:
            slots.holding("team-a").__enter__()
        assert mine.value.status == 429 and mine.value.headers() == {"Retry-After": "5"}
        with slots.holding("team-b"), slots.holding("team-c"):
            with pytest.raises(UploadsBusy) as full:
                slots.holding("team-d").__enter__()
            assert full.value.status == 503 and "SCRAPEJOBS_PARSE_QUEUE" in str(full.value)
    with slots.holding("team-a"):  # given back as each ended
        pass
