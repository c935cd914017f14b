"""The rendezvous of a bundle's batches: one call for everyone who asked, once every seat
asked or left or the wait ran out; a latecomer, a batch alone and a failed call each as the
batch's own call would be."""

from __future__ import annotations

import asyncio
from collections.abc import Sequence

import pytest

from scrapejobs_worker.batches.bundle_rendezvous import Rendezvous


class Calls:
    def __init__(self, fail: Exception | None = None) -> None:
        self.calls: list[list[int]] = []
        self.fail = fail

    async def __call__(self, requests: Sequence[int]) -> list[str]:
        self.calls.append(list(requests))
        await asyncio.sleep(0)
        if self.fail is not None:
            raise self.fail
        return [f"done {r}" for r in requests]


async def test_one_call_answers_every_seat_in_its_order() -> None:
    calls = Calls()
    rendezvous = Rendezvous(3, calls, wait_s=10)
    seats = [rendezvous.seat() for _ in range(3)]
    answers = await asyncio.gather(*(seat.ask(n) for n, seat in enumerate(seats)))
    assert answers == ["done 0", "done 1", "done 2"]
    assert calls.calls == [[0, 1, 2]]


async def test_a_seat_that_leaves_lets_the_others_go_at_once() -> None:
    calls = Calls()
    rendezvous = Rendezvous(3, calls, wait_s=10)
    first, second, third = (rendezvous.seat() for _ in range(3))
    asked = asyncio.gather(first.ask(1), second.ask(2))
    await asyncio.sleep(0.01)
    assert calls.calls == []  # still waiting for the third
    third.leave()
    assert await asyncio.wait_for(asked, 1) == ["done 1", "done 2"]
    third.leave()  # twice: nothing more
    assert calls.calls == [[1, 2]]


async def test_the_wait_runs_out_and_a_latecomer_goes_alone() -> None:
    calls = Calls()
    rendezvous = Rendezvous(3, calls, wait_s=0.02)
    first, second, late = (rendezvous.seat() for _ in range(3))
    assert await asyncio.gather(first.ask(1), second.ask(2)) == ["done 1", "done 2"]
    assert await late.ask(3) is None  # the call went: its batch calls the store alone
    assert calls.calls == [[1, 2]]


async def test_a_seat_alone_when_the_others_left_is_answered_none() -> None:
    calls = Calls()
    rendezvous = Rendezvous(2, calls, wait_s=10)
    alone, gone = rendezvous.seat(), rendezvous.seat()
    gone.leave()
    assert await asyncio.wait_for(alone.ask(1), 1) is None
    assert calls.calls == []


async def test_a_seat_asks_once() -> None:
    rendezvous = Rendezvous(2, Calls(), wait_s=10)
    first, second = rendezvous.seat(), rendezvous.seat()
    assert await asyncio.gather(first.ask(1), second.ask(2)) == ["done 1", "done 2"]
    assert await first.ask(3) is None  # a retry goes alone
    first.leave()  # after asking: nothing


async def test_a_failed_call_fails_each_seat_that_asked() -> None:
    rendezvous = Rendezvous(2, Calls(fail=ConnectionError("store down")), wait_s=10)
    first, second = rendezvous.seat(), rendezvous.seat()
    answers = await asyncio.gather(first.ask(1), second.ask(2), return_exceptions=True)
    assert all(isinstance(answer, ConnectionError) for answer in answers)


async def test_a_cancelled_seat_does_not_stop_the_call_for_the_others() -> None:
    calls = Calls()
    rendezvous = Rendezvous(2, calls, wait_s=10)
    first, second = rendezvous.seat(), rendezvous.seat()
    waiting = asyncio.create_task(first.ask(1))
    await asyncio.sleep(0)
    waiting.cancel()
    with pytest.raises(asyncio.CancelledError):
        await waiting
    assert await second.ask(2) == "done 2"
    assert calls.calls == [[1, 2]]
