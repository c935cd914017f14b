"""Reusing kept pages (``options.cache_max_age_s``) and keeping fetched ones
(``options.cache_store``) for a batch: one cache read before its tasks run, one write after
they are recorded.

A reused page finishes ``succeeded`` at once with the kept outcome, its ``fetched_at`` the
original fetch's (older than its job: that is how a reader tells a kept page). Crawls (a kept
page does not keep the links a crawl follows) and jobs with an ``ai`` stage (the model's answers
have a cache of their own) neither read nor keep pages. The cache failing is never the batch's
failure: a read that fails fetches every page, a write that fails keeps none (both logged).
"""

from __future__ import annotations

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

    def _applies(self, spec: JobSpec) -> bool:
        return (
            self._cache is not None and spec.crawl is None and ai_stage_index(spec.pipeline) is None
        )

    async def reused(self, spec: JobSpec, items: Sequence[BatchItem]) -> list[TaskResult]:
        """The results of ``items`` whose page is kept and young enough."""
        max_age = spec.options.cache_max_age_s
        if not max_age or not items or not self._applies(spec):
            return []
        assert self._cache is not None
        keys = dict(
            zip(
                (item.task_id for item in items),
                page_keys([item.url for item in items], spec),
                strict=True,
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
        for item in items:
            page = kept.get(keys[item.task_id])
            if page is not None:
                outcome = TaskOutcome(
                    TaskStatus.SUCCEEDED,
                    http_status=page.http_status,
                    data=page.data,
                    fetched_at=page.fetched_at,
                    truncated_fields=page.truncated_fields,
                    field_errors=page.field_errors,
                )
                results.append(
                    TaskResult(FinishTask(item.task_id, outcome), Kind.FINISHED, "cached")
                )
        return results

    async def keep(
        self, spec: JobSpec, items: Sequence[BatchItem], results: Sequence[TaskResult]
    ) -> None:
        """Keep the pages ``results`` fetched and succeeded (not those reused)."""
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
        try:
            with phase("cache"):
                await self._cache.put_many(pages, self._clock() + KEEP_FOR)
        except Exception:
            log.warning("page cache not written", extra={"pages": len(pages)}, exc_info=True)
