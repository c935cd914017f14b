"""Crawl jobs: pages discovered on a fetched page become tasks, each page once per job."""

from __future__ import annotations

import logging
from collections.abc import Sequence

from scrapejobs_shared.domain.clock import Clock
from scrapejobs_shared.domain.crawl_identity import crawl_task_id
from scrapejobs_shared.domain.jobspec import CrawlSpec
from scrapejobs_shared.domain.records import TaskOutcome, TaskRecord
from scrapejobs_shared.domain.statuses import TaskStatus
from scrapejobs_shared.messaging.task_message import TaskMessage
from scrapejobs_shared.observability.tracing import inject_trace_context
from scrapejobs_shared.ports.job_store import JobStore
from scrapejobs_shared.ports.task_publisher import TaskPublisher
from scrapejobs_worker.crawl_frontier import next_candidates

log = logging.getLogger(__name__)


class CrawlExpansion:
    def __init__(self, store: JobStore, publisher: TaskPublisher, clock: Clock) -> None:
        self._store = store
        self._publisher = publisher
        self._clock = clock

    async def expand(
        self, crawl: CrawlSpec, parent: TaskRecord, page_url: str, links: Sequence[str]
    ) -> int:
        """Create and publish the children of ``parent``; returns how many were new.

        Runs before the parent is marked finished, so the job cannot complete in between;
        a redelivered parent (its worker died before publishing) republishes its children
        that are still queued (duplicates are harmless: claims are idempotent).
        """
        candidates = next_candidates(links, page_url=page_url, page_depth=parent.depth, crawl=crawl)
        if not candidates:
            return 0
        now = self._clock()
        children = [
            TaskRecord(
                job_id=parent.job_id,
                id=crawl_task_id(parent.job_id, candidate.url),
                url=candidate.url,
                status=TaskStatus.QUEUED,
                created_at=now,
                updated_at=now,
                expire_at=parent.expire_at,
                depth=candidate.depth,
            )
            for candidate in candidates
        ]
        created = await self._store.add_tasks(children, max_new=crawl.max_pages - 1)
        to_publish = list(created)
        if parent.attempts > 1:
            to_publish += await self._still_queued(children, {t.id for t in created})
        await self._publish(to_publish)
        return len(created)

    async def _still_queued(self, children: list[TaskRecord], skip: set[str]) -> list[TaskRecord]:
        found = [await self._store.get_task(c.job_id, c.id) for c in children if c.id not in skip]
        return [t for t in found if t is not None and t.status is TaskStatus.QUEUED]

    async def _publish(self, tasks: list[TaskRecord]) -> None:
        messages = [TaskMessage(job_id=t.job_id, task_id=t.id, url=t.url) for t in tasks]
        results = await self._publisher.publish(messages, inject_trace_context())
        for task, result in zip(tasks, results, strict=True):
            if isinstance(result, BaseException):
                outcome = TaskOutcome(TaskStatus.FAILED, error="publish_failed: could not enqueue")
                await self._store.finish_task(task.job_id, task.id, outcome, self._clock())
                log.error("crawl task not published", extra={"task_id": task.id})
