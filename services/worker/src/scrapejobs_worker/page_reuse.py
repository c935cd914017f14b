"""Reusing kept pages (``options.cache_max_age_s``) and keeping fetched ones
(``options.cache_store``) for a batch: one cache read beside its claim (of the message's tasks,
before the claim says which are open), one write after its results are recorded, in the
background (the delivery answers without waiting for it; shutdown waits for those under way).

A reused page finishes ``succeeded`` at once with the kept outcome, its ``fetched_at`` the
original fetch's (older than its job: that is how a reader tells a kept page). Crawls (a kept
page does not keep the links a crawl follows) and jobs with an ``ai`` stage (the model's answers
have a cache of their own) neither read nor keep pages. The cache failing is never the batch's
failure: a read that fails fetches every page, a write that fails keeps none (both logged).
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Sequence
from datetime import timedelta

from scrapejobs_shared.domain.batch_transitions import FinishTask
from scrapejobs_shared.domain.clock import Clock
from scrapejobs_shared.domain.jobspec import MAX_CACHE_AGE_S, JobSpec
from scrapejobs_shared.domain.records import BatchItem, TaskOutcome
from scrapejobs_shared.domain.statuses import TaskStatus
from scrapejobs_shared.pipeline.spec import ai_stage_index
from scrapejobs_shared.ports.page_cache import CachedPage, PageCache, page_keys
from scrapejobs_worker.phase_timer import phase
from scrapejobs_worker.task_runner import Kind, TaskResult

log = logging.getLogger(__name__)
KEEP_FOR = timedelta(seconds=MAX_CACHE_AGE_S)


class PageReuse:
    def __init__(self, cache: PageCache | None, clock: Clock) -> None:
        self._cache = cache
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
        keys = dict(
            zip(
                (task for task, _ in items), page_keys([url for _, url in items], spec), strict=True
            )
        )
        try:
            with phase("cache"):
                kept = await self._cache.get_many(
                    list(keys.values()), self._clock() - timedelta(seconds=max_age)
                )
        except Exception:
            log.warning("page cache not read: fetching every page", exc_info=True)
            return []
        results = []
        for task, _ in items:
            page = kept.get(keys[task])
            if page is not None:
                outcome = TaskOutcome(
                    TaskStatus.SUCCEEDED,
                    http_status=page.http_status,
                    data=page.data,
                    fetched_at=page.fetched_at,
                    truncated_fields=page.truncated_fields,
                    field_errors=page.field_errors,
                )
                results.append(TaskResult(FinishTask(task, outcome), Kind.FINISHED, "cached"))
        return results

    def keep(
        self, spec: JobSpec, items: Sequence[BatchItem], results: Sequence[TaskResult]
    ) -> None:
        """Keep, in the background, the pages ``results`` fetched and succeeded (not those
        reused)."""
        if not spec.options.cache_store or not self._applies(spec):
            return
        assert self._cache is not None
        urls = {item.task_id: item.url for item in items}
        fetched = [
            (urls[result.change.task_id], result.change.outcome)
            for result in results
            if isinstance(result.change, FinishTask)
            and result.outcome != "cached"
            and result.change.outcome.status is TaskStatus.SUCCEEDED
            and result.change.task_id in urls
        ]
        if not fetched:
            return
        keys = page_keys([url for url, _ in fetched], spec)
        pages = {
            key: CachedPage(
                http_status=outcome.http_status,
                data=outcome.data or {},
                fetched_at=outcome.fetched_at or self._clock(),
                truncated_fields=outcome.truncated_fields,
                field_errors=outcome.field_errors,
            )
            for key, (_, outcome) in zip(keys, fetched, strict=True)
        }
        write = asyncio.create_task(self._put(pages))
        self._writes.add(write)
        write.add_done_callback(self._writes.discard)

    async def _put(self, pages: dict[str, CachedPage]) -> None:
        assert self._cache is not None
        try:
            await self._cache.put_many(pages, self._clock() + KEEP_FOR)
        except Exception:
            log.warning("page cache not written", extra={"pages": len(pages)}, exc_info=True)

    async def drain(self) -> None:
        """Wait for the writes under way (shutdown; tests)."""
        while self._writes:
            await asyncio.gather(*self._writes, return_exceptions=True)
