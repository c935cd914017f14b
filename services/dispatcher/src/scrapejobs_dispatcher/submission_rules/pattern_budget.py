"""A job's regular expressions, bounded: at most ``max_patterns`` of them (extraction fields'
``re``, a crawl's ``include``/``exclude``, its schemas' ``pattern``s), each compiled within
its memory budget (user_regex.py: 512 KiB, under ~10 ms of CPU) in a thread of its own, one
pattern at a time across the process, so that neither a request nor twenty in parallel hold
the event loop more than one compile's few ms, and the dispatcher's memory holds one program
at a time (dropped at once). Past a bound: an ``OverLimit`` naming the field (a 422)."""

from __future__ import annotations

import asyncio
from concurrent.futures import ThreadPoolExecutor

from scrapejobs_dispatcher.job_errors import OverLimit
from scrapejobs_dispatcher.submission_rules.rules import JobShape
from scrapejobs_shared.domain.job_patterns import patterns_of
from scrapejobs_shared.domain.user_regex import UnsupportedRegex, compile_within_budget

MAX_PATTERNS = 64


class PatternBudget:
    def __init__(self, executor: ThreadPoolExecutor, max_patterns: int = MAX_PATTERNS) -> None:
        """``executor``: the thread patterns compile in (one: they take turns)."""
        self._executor = executor
        self._max = max_patterns

    async def check(self, job: JobShape) -> None:
        found = patterns_of(job)
        if len(found) > self._max:
            raise OverLimit(
                found[self._max].field,
                f"a job holds at most {self._max} regular expressions (this one holds "
                f"{len(found)}: extraction fields' re, crawl include/exclude, schema patterns)",
            )
        loop = asyncio.get_running_loop()
        for where, pattern in found:
            try:
                await loop.run_in_executor(self._executor, _compiles, pattern)
            except UnsupportedRegex as exc:
                raise OverLimit(where, str(exc)) from None


def _compiles(pattern: str) -> None:
    compile_within_budget(pattern)  # the program is dropped here
