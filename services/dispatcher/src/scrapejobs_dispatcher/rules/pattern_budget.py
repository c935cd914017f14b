"""A job's regular expressions, bounded: at most ``max_patterns`` of them (extraction fields'
``re``, a crawl's ``include``/``exclude``, its schemas' ``pattern``s), each compiled within
its memory budget (user_regex.py: 512 KiB, ~20 ms of CPU at most) in one thread, one pattern at
a time across the process, so that neither a request nor twenty in parallel hold the event loop
more than one compile's few ms, and the dispatcher's memory holds one program at a time
(dropped at once). The tenants waiting take turns pattern by pattern (``CompileTurns``): one
tenant's costly submissions never make another's wait behind all of them. Past a bound: an
``OverLimit`` naming the field (a 422)."""

from __future__ import annotations

import asyncio
from collections import OrderedDict, deque
from concurrent.futures import ThreadPoolExecutor

from scrapejobs_dispatcher.rules.refusals import OverLimit
from scrapejobs_dispatcher.rules.rules import JobShape
from scrapejobs_shared.domain.job_patterns import patterns_of
from scrapejobs_shared.extraction.user_regex import UnsupportedRegex, compile_within_budget

MAX_PATTERNS = 64


class CompileTurns:
    """The one compile thread, shared fairly: each tenant waiting has a queue of patterns, and
    the thread takes one pattern of each tenant in turn."""

    def __init__(self, executor: ThreadPoolExecutor) -> None:
        self._executor = executor
        self._queues: OrderedDict[str, deque[tuple[str, asyncio.Future[None]]]] = OrderedDict()
        self._worker: asyncio.Task[None] | None = None

    async def compile(self, tenant: str, pattern: str) -> None:
        """Compile ``pattern`` within its budget, in ``tenant``'s turn (``UnsupportedRegex``
        when it cannot be)."""
        loop = asyncio.get_running_loop()
        done: asyncio.Future[None] = loop.create_future()
        self._queues.setdefault(tenant, deque()).append((pattern, done))
        if self._worker is None:
            self._worker = loop.create_task(self._work())
        await asyncio.shield(done)

    async def _work(self) -> None:
        loop = asyncio.get_running_loop()
        try:
            while self._queues:
                tenant, queue = self._queues.popitem(last=False)  # the next tenant's turn
                pattern, done = queue.popleft()
                if queue:
                    self._queues[tenant] = queue  # its next pattern after the others'
                try:
                    await loop.run_in_executor(self._executor, _compiles, pattern)
                except Exception as exc:
                    if not done.done():
                        done.set_exception(exc)
                else:
                    if not done.done():
                        done.set_result(None)
        finally:
            self._worker = None


class PatternBudget:
    def __init__(self, turns: CompileTurns, max_patterns: int = MAX_PATTERNS) -> None:
        self._turns = turns
        self._max = max_patterns

    async def check(self, job: JobShape, tenant: str) -> None:
        found = patterns_of(job)
        if len(found) > self._max:
            raise OverLimit(
                found[self._max].field,
                f"a job holds at most {self._max} regular expressions (this one holds "
                f"{len(found)}: extraction fields' re, crawl include/exclude, schema patterns)",
            )
        for where, pattern in found:
            try:
                await self._turns.compile(tenant, pattern)
            except UnsupportedRegex as exc:
                raise OverLimit(where, str(exc)) from None


def _compiles(pattern: str) -> None:
    compile_within_budget(pattern)  # the program is dropped here
