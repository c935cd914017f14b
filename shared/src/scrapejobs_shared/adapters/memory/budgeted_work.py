"""The budgeted-work port's twin for unit tests: calls run in a thread, off the event loop;
the output size is held (the answer is pickled, as it would cross a pipe), CPU and memory are
not (only a process of its own can hold them: adapters/budgeted_processes.py)."""

from __future__ import annotations

import asyncio
import pickle
from collections.abc import Callable
from typing import TypeVar

from scrapejobs_shared.ports.budgeted_work import Budget, OverBudget

T = TypeVar("T")


class InlineWork:
    def __init__(self) -> None:
        self.calls = 0

    async def run(self, budget: Budget, call: Callable[..., T], *args: object) -> T:
        self.calls += 1
        args = pickle.loads(pickle.dumps(args))  # what crosses must pickle, and is a copy
        value = await asyncio.to_thread(call, *args)
        answer = pickle.dumps(value, pickle.HIGHEST_PROTOCOL)
        if budget.output_bytes and len(answer) > budget.output_bytes:
            raise OverBudget(budget, "output")
        loaded: T = pickle.loads(answer)
        return loaded

    async def close(self) -> None:
        return None
