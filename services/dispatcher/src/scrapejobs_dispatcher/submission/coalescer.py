"""Coalesced submissions: small jobs (one batch, no crawl) submitted within a few milliseconds
of each other are created in one store commit and published as one bundle message per lane.

One-URL jobs are how most callers use a scraping queue (one page per request); alone, each
costs a commit and a message, and the emulator and Pub/Sub pace pushes per message. Together,
a burst of them costs one commit and one push, which the worker runs side by side.

The window opens with the first job and closes ``window_s`` later (``busy_window_s`` while
submissions arrive faster than one per ``busy_window_s``: then a longer wait gathers several
jobs per message, where alone each would queue for its own push; a caller submitting one job
at a time never waits more than ``window_s``), or sooner when the group reaches the commit's
document budget. Each caller is answered only after the group's commit
and publish: a ``202`` still means the job is durable. A crash inside the window loses only
jobs no caller was told about (their clients retry; an ``Idempotency-Key`` makes that safe),
and a crash after the commit leaves the jobs ``publishing``, which maintenance republishes.
"""

from __future__ import annotations

import asyncio
import collections
import logging
import time
from collections.abc import Sequence
from dataclasses import dataclass, field

from scrapejobs_shared.delivery.enqueue import Enqueuer
from scrapejobs_shared.domain.clock import Clock
from scrapejobs_shared.domain.records import BatchRecord, JobRecord
from scrapejobs_shared.observability.store_ops import counting
from scrapejobs_shared.ports.job_store import (
    MAX_COALESCED_WRITES,
    JobExists,
    coalesced_writes,
)
from scrapejobs_shared.ports.jobs import Jobs

log = logging.getLogger(__name__)

DEFAULT_WINDOW_S = 0.002
DEFAULT_BUSY_WINDOW_S = 0.05
RATE_SPAN_S = 1.0  # arrivals counted over this span to tell quiet from busy
REMEMBERED = 100_000  # ids of jobs published lately (a retried submission's check)


@dataclass(slots=True)
class _Waiting:
    job: JobRecord
    batches: Sequence[BatchRecord]
    claim_token: str | None = None  # answered by the store for a job that holds its batch
    answer: asyncio.Future[int] = field(
        default_factory=lambda: asyncio.get_running_loop().create_future()
    )


class SubmissionCoalescer:
    def __init__(
        self,
        store: Jobs,
        enqueuer: Enqueuer,
        clock: Clock,
        window_s: float = DEFAULT_WINDOW_S,
        busy_window_s: float = DEFAULT_BUSY_WINDOW_S,
        max_writes: int = MAX_COALESCED_WRITES,
    ) -> None:
        self._store = store
        self._enqueuer = enqueuer
        self._clock = clock
        self._window_s = window_s
        self._busy_window_s = max(busy_window_s, window_s)
        self._arrivals: collections.deque[float] = collections.deque()
        self._max_writes = max_writes
        self._group: list[_Waiting] = []
        self._writes = 0
        self._timer: asyncio.TimerHandle | None = None
        self._flushing: set[asyncio.Task[None]] = set()
        self._published: collections.OrderedDict[str, None] = collections.OrderedDict()

    @staticmethod
    def takes(job: JobRecord, batches: Sequence[BatchRecord]) -> bool:
        """Whether the job is small enough to be coalesced: one batch, not a crawl (the
        worker relies on it: a job whose spec is carried has no batch but this one)."""
        return len(batches) == 1 and job.kind != "crawl"

    async def submit(self, job: JobRecord, batches: Sequence[BatchRecord]) -> int:
        """Create and publish the job with whatever else arrives within the window; returns
        how many of its tasks were failed because their message could not be published.
        Raises ``JobExists`` when the job id exists, and whatever stopped the group's commit."""
        twin = next((w for w in self._group if w.job.id == job.id), None)
        if twin is not None:  # the same id twice in one group (a keyed request and its retry)
            await asyncio.shield(twin.answer)  # created by the first, or failed as it did
            raise JobExists(job.id)
        waiting = _Waiting(job, batches)
        window = self._window_on_arrival()
        writes = coalesced_writes(job, batches)
        if self._group and self._writes + writes > self._max_writes:
            self._flush()
        self._group.append(waiting)
        self._writes += writes
        if self._timer is None:
            self._timer = asyncio.get_running_loop().call_later(window, self._flush)
        # A caller that goes away does not stop the group: the others wait on the same commit.
        return await asyncio.shield(waiting.answer)

    def _window_on_arrival(self) -> float:
        """Count an arrival; the window a group it opens waits: ``busy_window_s`` while the
        last second's arrivals promise another job within it, else ``window_s``."""
        now = time.monotonic()
        self._arrivals.append(now)
        while self._arrivals[0] < now - RATE_SPAN_S:
            self._arrivals.popleft()
        busy = len(self._arrivals) * self._busy_window_s > RATE_SPAN_S
        return self._busy_window_s if busy else self._window_s

    def _flush(self) -> None:
        if self._timer is not None:
            self._timer.cancel()
            self._timer = None
        group, self._group, self._writes = self._group, [], 0
        if group:
            task = asyncio.get_running_loop().create_task(self._commit(group))
            self._flushing.add(task)
            task.add_done_callback(self._flushing.discard)

    async def _commit(self, group: list[_Waiting]) -> None:
        with counting() as ops:
            try:
                created = await self._create(group)
                failed = await self._publish(created)
            except Exception as exc:
                for waiting in group:
                    if not waiting.answer.done():
                        waiting.answer.set_exception(exc)
                return
        for waiting in created:
            waiting.answer.set_result(failed.get(waiting.job.id, 0))
        log.info(
            "submissions coalesced",
            extra={
                "jobs": len(created),
                "firestore_reads": ops.reads,
                "firestore_writes": ops.writes,
            },
        )

    async def _create(self, group: list[_Waiting]) -> list[_Waiting]:
        """One commit for the group. An id that exists (a retried keyed or scheduled
        submission) fails the whole commit: then each job is created alone, so only the
        duplicates answer ``JobExists``."""
        try:
            tokens = await self._store.create_jobs([(w.job, w.batches) for w in group])
            return self._with_tokens(group, tokens)
        except JobExists:
            if len(group) == 1:
                raise
        outcomes = await asyncio.gather(
            *(self._store.create_jobs([(w.job, w.batches)]) for w in group),
            return_exceptions=True,
        )
        created: list[_Waiting] = []
        for waiting, outcome in zip(group, outcomes, strict=True):
            if isinstance(outcome, BaseException):
                waiting.answer.set_exception(outcome)
            else:
                created += self._with_tokens([waiting], outcome)
        return created

    @staticmethod
    def _with_tokens(created: list[_Waiting], tokens: dict[str, str]) -> list[_Waiting]:
        for waiting in created:
            waiting.claim_token = tokens.get(waiting.job.id)
        return created

    async def _publish(self, created: list[_Waiting]) -> dict[str, int]:
        if not created:
            return {}
        batches = [batch for waiting in created for batch in waiting.batches]
        specs = {waiting.job.id: waiting.job.spec for waiting in created}
        tokens = {w.job.id: w.claim_token for w in created if w.claim_token is not None}
        failed = await self._enqueuer.publish_bundled(batches, specs, tokens)
        # a job that holds its batch is marked published by its first claim (a write here
        # would outdate its claim token); until then, this process remembers it
        unmarked = [w.job.id for w in created if w.claim_token is None]
        if unmarked:
            await self._store.mark_published(unmarked, self._clock())
        for waiting in created:
            if waiting.claim_token is not None and not failed.get(waiting.job.id):
                self._published[waiting.job.id] = None
        while len(self._published) > REMEMBERED:
            self._published.popitem(last=False)
        return failed

    def published(self, job_id: str) -> bool:
        """Whether this process published the job (one that holds its batch) lately."""
        return job_id in self._published

    async def drain(self) -> None:
        """Commit what is waiting and wait for every commit under way (shutdown)."""
        self._flush()
        if self._flushing:
            await asyncio.gather(*self._flushing, return_exceptions=True)
