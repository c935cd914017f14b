"""Reusing kept pages (``options.cache_max_age_s``) and keeping fetched ones
(``options.cache_store``) for a batch: one read of the page cache beside its claim (for the
message's tasks, before the claim says which are open) and a read of each result found there
(once a job's first batches here found nothing kept, one batch in ten reads);
a page fetched and succeeded is indexed under its key in the commit that records its result
(``FinishTask.kept_under``: no write of its own).

Pages are kept per tenant: a job reuses only its own tenant's pages (another tenant's fetch,
and its time, are none of its business). A reused page finishes ``succeeded`` at once with the
kept result, its ``fetched_at`` the
original fetch's (older than its job: that is how a reader tells a reused page). An entry whose
result is gone (its job expired or was deleted) is a miss. Crawls (a result does not keep the
links a crawl follows) and jobs with an ``ai`` stage (the model's answers have a cache of their
own) and jobs asking for a screenshot (of their own visit, kept with their own files) neither
read nor keep pages. The cache failing is never the batch's failure: a read that
fails fetches every page, a write that fails keeps none (both logged).
"""

from __future__ import annotations

import asyncio
import logging
from collections import OrderedDict
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from datetime import timedelta

from scrapejobs_shared.domain.batch_transitions import FinishTask
from scrapejobs_shared.domain.clock import Clock
from scrapejobs_shared.domain.jobspec import JobSpec
from scrapejobs_shared.domain.records import TaskOutcome, TaskRecord
from scrapejobs_shared.domain.statuses import TaskStatus
from scrapejobs_shared.extraction.formats import FORMATS
from scrapejobs_shared.observability.phase_timer import phase
from scrapejobs_shared.options import PAGE_CACHE
from scrapejobs_shared.pipeline.spec import ai_stage_index
from scrapejobs_shared.ports.page_cache import PageCache, page_key_of, page_keys
from scrapejobs_shared.ports.task_results import TaskResults
from scrapejobs_worker.tasks.task_runner import Kind, TaskResult

log = logging.getLogger(__name__)
REUSED = "cached"  # the outcome label of a reused page (logs, metrics)
# A job whose first batches here found nothing kept reads the index for one batch in ten after
# them (fetching fresh is always within maxAge); a batch that finds pages turns reading back on.
EMPTY_READS_BEFORE_SAMPLING = 2
SAMPLE_EVERY = 10
JOBS_TRACKED = 1000


@dataclass(eq=False)
class PageReuse:
    cache: PageCache | None
    results: TaskResults
    clock: Clock
    _empty: OrderedDict[str, list[int]] = field(init=False, default_factory=OrderedDict)

    def _applies(self, spec: JobSpec) -> bool:
        return (
            self.cache is not None
            and spec.crawl is None
            and ai_stage_index(spec.pipeline) is None
            # a screenshot is of this job's own visit, in its files
            and not FORMATS.browser_made(spec.options.formats)
        )

    async def reused(
        self, job_id: str, spec: JobSpec, items: Sequence[tuple[str, str]], tenant: str | None
    ) -> list[TaskResult]:
        """The results of ``items`` (task id, URL) whose page ``tenant`` kept, young enough
        (a batch whose tenant is not known reuses nothing)."""
        max_age = PAGE_CACHE.of(spec.options).max_age_s
        if not max_age or not items or tenant is None or not self._applies(spec):
            return []
        if not self._reads(job_id):
            return []
        assert self.cache is not None
        tasks = [task for task, _ in items]
        urls = [url for _, url in items]
        keys = dict(zip(tasks, page_keys(urls, spec, tenant=tenant), strict=True))
        try:
            with phase("cache"):
                entries = await self.cache.get_many(
                    list(keys.values()), self.clock() - timedelta(seconds=max_age)
                )
                hits = [(task, entries[keys[task]]) for task in tasks if keys[task] in entries]
                kept = await asyncio.gather(
                    *(self.results.get_task(page.job_id, page.task_id) for _, page in hits)
                )
        except Exception:
            log.warning("page cache not read: fetching every page", exc_info=True)
            return []
        self._found(job_id, bool(hits))
        return [
            TaskResult(FinishTask(task, _outcome(record)), Kind.FINISHED, REUSED)
            for (task, _), record in zip(hits, kept, strict=True)
            if record is not None and record.status is TaskStatus.SUCCEEDED
        ]

    def _reads(self, job_id: str) -> bool:
        """Whether this batch of the job reads the index (see EMPTY_READS_BEFORE_SAMPLING)."""
        state = self._empty.get(job_id)
        if state is None or state[0] < EMPTY_READS_BEFORE_SAMPLING:
            return True
        state[1] += 1
        return state[1] % SAMPLE_EVERY == 0

    def _found(self, job_id: str, anything: bool) -> None:
        if anything:
            self._empty.pop(job_id, None)
            return
        state = self._empty.setdefault(job_id, [0, 0])
        state[0] += 1
        self._empty.move_to_end(job_id)
        while len(self._empty) > JOBS_TRACKED:
            self._empty.popitem(last=False)

    def key_of(self, spec: JobSpec, tenant: str) -> Callable[[str], str] | None:
        """The page cache key of a page of ``spec``'s, when the job keeps its pages (a
        fetched page that succeeds is then indexed with its result: ``FinishTask.kept_under``),
        kept for ``tenant`` only."""
        if not PAGE_CACHE.of(spec.options).store or not self._applies(spec):
            return None
        return page_key_of(spec, tenant=tenant)


def _outcome(record: TaskRecord) -> TaskOutcome:
    return TaskOutcome(
        TaskStatus.SUCCEEDED,
        http_status=record.http_status,
        data=record.data,
        fetched_at=record.fetched_at,
        truncated_fields=record.truncated_fields,
        field_errors=record.field_errors,
    )
