"""The budgeted-work port (ports/budgeted_work.py): its processes and its unit-test twin give
the same answers; the processes also hold CPU, memory and wall time."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from dataclasses import replace

import pytest

from scrapejobs_shared.adapters.budgeted_processes import BudgetedProcesses
from scrapejobs_shared.adapters.memory.budgeted_work import InlineWork
from scrapejobs_shared.errors import InvalidInput
from scrapejobs_shared.ports.budgeted_work import Budget, BudgetedWork, OverBudget
from support import budgeted_calls
from support.loop_ticks import ticking

BUDGET = Budget("test call", "SCRAPEJOBS_TEST_BUDGET_S", cpu_s=1.0, output_bytes=1 << 20)


@pytest.fixture(params=["memory", "processes"])
async def work(request: pytest.FixtureRequest) -> AsyncIterator[BudgetedWork]:
    runner = InlineWork() if request.param == "memory" else BudgetedProcesses(2)
    yield runner
    await runner.close()


async def test_a_call_answers_its_value(work: BudgetedWork) -> None:
    assert await work.run(BUDGET, budgeted_calls.add, 2, 3) == 5


async def test_what_a_call_raises_reaches_the_caller(work: BudgetedWork) -> None:
    with pytest.raises(InvalidInput, match="no such thing"):
        await work.run(BUDGET, budgeted_calls.refuse, "no such thing")
    assert await work.run(BUDGET, budgeted_calls.add, 1, 1) == 2  # and the next call runs


async def test_an_answer_past_the_output_budget_is_refused(work: BudgetedWork) -> None:
    with pytest.raises(OverBudget) as raised:
        await work.run(BUDGET, budgeted_calls.large, 2)
    assert raised.value.exceeded == "output"
    assert "test call's answer was larger than 1024 KiB" in str(raised.value)


async def test_a_call_past_its_cpu_is_stopped_and_the_next_runs() -> None:
    runner = BudgetedProcesses(1)
    try:
        with pytest.raises(OverBudget) as raised:
            await runner.run(BUDGET, budgeted_calls.spin, 30.0)
        assert raised.value.exceeded == "cpu"
        assert "more than 1 s of CPU (SCRAPEJOBS_TEST_BUDGET_S)" in str(raised.value)
        assert await runner.run(BUDGET, budgeted_calls.add, 1, 2) == 3
    finally:
        await runner.close()


async def test_a_call_past_its_memory_is_stopped_and_the_next_runs() -> None:
    runner = BudgetedProcesses(1)
    small = Budget("test call", "X", cpu_s=5.0, memory_mb=64)
    try:
        with pytest.raises(OverBudget) as raised:
            await runner.run(small, budgeted_calls.hoard, 512)
        assert raised.value.exceeded == "memory"
        assert await runner.run(small, budgeted_calls.hoard, 16) == 16
    finally:
        await runner.close()


async def test_a_silent_call_is_ended_at_its_wall_time() -> None:
    runner = BudgetedProcesses(1)
    quick = Budget("test call", "X", cpu_s=0.01)  # wall: 3 x 1.01 + 5 s
    try:
        with pytest.raises(OverBudget) as raised:
            await runner.run(quick, budgeted_calls.sleep, 60.0)
        assert raised.value.exceeded == "wall"
    finally:
        await runner.close()


async def test_the_event_loop_runs_while_a_call_works() -> None:
    runner = BudgetedProcesses(1)
    try:
        async with ticking() as ticks:
            await runner.run(BUDGET, budgeted_calls.spin, 0.5)
        assert ticks.count >= 10  # the loop kept turning through half a second of the call's CPU
    finally:
        await runner.close()


async def test_owners_waiting_for_the_process_take_turns() -> None:
    """A tenant's queue of calls makes another tenant's wait for one of them, not all."""
    runner = BudgetedProcesses(1)
    finished: list[str] = []

    async def call(owner: str, name: str) -> None:
        await runner.run(replace(BUDGET, owner=owner), budgeted_calls.sleep, 0.05)
        finished.append(name)

    try:
        first = asyncio.create_task(call("team-a", "a1"))
        await asyncio.sleep(0.01)
        rest = [asyncio.create_task(call("team-a", f"a{n}")) for n in (2, 3, 4)]
        await asyncio.sleep(0.01)
        rest.append(asyncio.create_task(call("team-b", "b1")))
        await asyncio.gather(first, *rest)
    finally:
        await runner.close()
    assert finished == ["a1", "a2", "b1", "a3", "a4"]
