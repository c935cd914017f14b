"""Reusing kept pages (``options.cache_max_age_s``) and keeping fetched ones
(``options.cache_store``) for a batch: one read of the page cache beside its claim (for the
message's tasks, before the claim says which are open) and a read of each result found there,
then one small write after its results are recorded, in the background (the delivery answers
without waiting for it; shutdown waits for those under way).

A reused page finishes ``succeeded`` at once with the kept result, its ``fetched_at`` the
original fetch's (older than its job: that is how a reader tells a reused page). An entry whose
result is gone (its job expired or was deleted) is a miss. Crawls (a result does not keep the
links a crawl follows) and jobs with an ``ai`` stage (the model's answers have a cache of their
own) neither read nor keep pages. The cache failing is never the batch's failure: a read that
fails fetches every page, a write that fails keeps none (both logged).
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Sequence
from datetime import datetime, timedelta

from scrapejobs_shared.domain.batch_transitions import FinishTask
from scrapejobs_shared.domain.clock import Clock
from scrapejobs_shared.domain.jobspec import MAX_CACHE_AGE_S, JobSpec
from scrapejobs_shared.domain.records import BatchRecord, TaskOutcome, TaskRecord
from scrapejobs_shared.domain.statuses import TaskStatus
from scrapejobs_shared.pipeline.spec import ai_stage_index
from scrapejobs_shared.ports.job_store import JobStore
from scrapejobs_shared.ports.page_cache import KeptPage, PageCache, page_keys
from scrapejobs_worker.phase_timer import phase
from scrapejobs_worker.task_runner import Kind, TaskResult

log = logging.getLogger(__name__)
KEEP_FOR = timedelta(seconds=MAX_CACHE_AGE_S)
REUSED = "cached"  # the outcome label of a reused page (logs, metrics)


class PageReuse:
    def __init__(self, cache: PageCache | None, results: JobStore, clock: Clock) -> None:
        self._cache = cache
        self._results = results
        self._clock = clock
        self._writes: set[asyncio.Task[None]] = set()

    def _applies(self, spec: JobSpec) -> bool:
        return (
            self._cache is not None and spec.crawl is None and ai_stage_index(spec.pipeline) is None
        )

    async def reused(self, spec: JobSpec, items: Sequence[tuple[str, str]]) -> list[TaskResult]:
        """The results of ``items`` (task id, URL) whose page is kept and young enough."""
        max_age = spec.options.cache_max_age_s
        if not max_age or not items or not self._applies(spec):
            return []
        assert self._cache is not None
        tasks = [task for task, _ in items]
        keys = dict(zip(tasks, page_keys([url for _, url in items], spec), strict=True))
        try:
            with phase("cache"):
                entries = await self._cache.get_many(
                    list(keys.values()), self._clock() - timedelta(seconds=max_age)
                )
                hits = [(task, entries[keys[task]]) for task in tasks if keys[task] in entries]
                kept = await asyncio.gather(
                    *(self._results.get_task(page.job_id, page.task_id) for _, page in hits)
                )
        except Exception:
            log.warning("page cache not read: fetching every page", exc_info=True)
            return []
        return [
            TaskResult(FinishTask(task, _outcome(record)), Kind.FINISHED, REUSED)
            for (task, _), record in zip(hits, kept, strict=True)
            if record is not None and record.status is TaskStatus.SUCCEEDED
        ]

    def keep(self, spec: JobSpec, batch: BatchRecord, results: Sequence[TaskResult]) -> None:
        """Keep, in the background, the pages ``results`` fetched and succeeded (not those
        reused)."""
        if not spec.options.cache_store or not self._applies(spec):
            return
        urls = {item.task_id: item.url for item in batch.items}
        fetched = [
            (result.change.task_id, result.change.outcome)
            for result in results
            if isinstance(result.change, FinishTask)
            and result.outcome != REUSED
            and result.change.outcome.status is TaskStatus.SUCCEEDED
            and result.change.task_id in urls
        ]
        if not fetched:
            return
        keys = page_keys([urls[task] for task, _ in fetched], spec)
        now = self._clock()
        pages = {
            key: KeptPage(batch.job_id, task, outcome.fetched_at or now)
            for key, (task, outcome) in zip(keys, fetched, strict=True)
        }
        write = asyncio.create_task(self._put(pages, min(now + KEEP_FOR, batch.expire_at)))
        self._writes.add(write)
        write.add_done_callback(self._writes.discard)

    async def _put(self, pages: dict[str, KeptPage], expire_at: datetime) -> None:
        assert self._cache is not None
        try:
            await self._cache.put_many(pages, expire_at)
        except Exception:
            log.warning("page cache not written", extra={"pages": len(pages)}, exc_info=True)

    async def drain(self) -> None:
        """Wait for the writes under way (shutdown; tests)."""
        while self._writes:
            await asyncio.gather(*self._writes, return_exceptions=True)


def _outcome(record: TaskRecord) -> TaskOutcome:
    return TaskOutcome(
        TaskStatus.SUCCEEDED,
        http_status=record.http_status,
        data=record.data,
        fetched_at=record.fetched_at,
        truncated_fields=record.truncated_fields,
        field_errors=record.field_errors,
    )
