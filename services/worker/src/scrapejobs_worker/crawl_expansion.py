"""Crawl jobs: the pages one page discovers become one batch of new tasks, each page once per
job."""

from __future__ import annotations

import asyncio
from collections.abc import Sequence

from scrapejobs_shared.delivery.batching import plan_batches
from scrapejobs_shared.delivery.enqueue import Enqueuer
from scrapejobs_shared.domain.clock import Clock
from scrapejobs_shared.domain.crawl_identity import crawl_task_id
from scrapejobs_shared.domain.crawl_spec import CrawlSpec
from scrapejobs_shared.domain.jobspec import JobSpec
from scrapejobs_shared.domain.records import BatchItem, BatchRecord
from scrapejobs_shared.messaging.task_message import MAX_BATCH_SIZE
from scrapejobs_shared.ports.batch_store import BatchStore
from scrapejobs_worker.crawl_frontier import CrawlCandidate, next_candidates


class CrawlExpansion:
    def __init__(self, store: BatchStore, enqueuer: Enqueuer, clock: Clock) -> None:
        self._store = store
        self._enqueuer = enqueuer
        self._clock = clock

    async def expand(
        self,
        spec: JobSpec,
        parent: BatchRecord,
        parent_task: BatchItem,
        page_url: str,
        links: Sequence[str],
    ) -> int:
        """Create and publish the children of ``parent_task`` of the crawl job ``spec``, in
        its lane (documents in theirs); returns how many were new.

        Runs before the parent is settled, so the job cannot complete in between. The child
        batches' ids derive from the parent task, so a redelivered parent (its worker died
        before publishing) finds them again and publishes what is still open (duplicates are
        harmless: a batch is claimed by one delivery at a time and finished tasks are skipped).
        """
        if spec.crawl is None:
            return 0
        candidates = await _off_the_loop(links, page_url, parent_task.depth, spec.crawl)
        return await self._add(spec, parent, candidates, f"crawl:{parent_task.task_id}")

    async def expand_sitemap(
        self, spec: JobSpec, parent: BatchRecord, start_task: BatchItem, pages: Sequence[str]
    ) -> int:
        """Create and publish the pages the site's sitemaps list, in the crawl's scope, at
        depth 0 (as Firecrawl counts them); their batch ids derive from the start task, apart
        from its links'."""
        if spec.crawl is None:
            return 0
        candidates = await _off_the_loop(pages, start_task.url, -1, spec.crawl)
        return await self._add(spec, parent, candidates, f"sitemap:{start_task.task_id}")

    async def _add(
        self,
        spec: JobSpec,
        parent: BatchRecord,
        candidates: Sequence[CrawlCandidate],
        key: str,
    ) -> int:
        crawl = spec.crawl
        if not candidates or crawl is None:
            return 0
        items = [
            BatchItem(
                task_id=crawl_task_id(parent.job_id, candidate.url),
                url=candidate.url,
                depth=candidate.depth,
            )
            for candidate in candidates
        ]
        planned = plan_batches(
            parent.job_id,
            items,
            MAX_BATCH_SIZE,
            self._clock(),
            parent.expire_at,
            key=key,
            lane=spec.lane(),
            tenant=parent.tenant,
        )
        stored: list[BatchRecord] = []
        new = 0
        for batch in planned:
            added = await self._store.add_batch(batch, max_new=crawl.max_pages - 1)
            if added is not None:
                stored.append(added)
                new += len(added.items)
        await self._enqueuer.publish(stored)
        return new


async def _off_the_loop(
    links: Sequence[str], page_url: str, depth: int, crawl: CrawlSpec
) -> list[CrawlCandidate]:
    """The crawl's candidates among ``links``, found in a thread: the crawl's own patterns
    (compiled within their budget, user_regex.py) and thousands of links never hold the event
    loop, and with it the worker's other batches."""
    if not links or depth >= crawl.max_depth:
        return []
    return await asyncio.to_thread(
        next_candidates, links, page_url=page_url, page_depth=depth, crawl=crawl
    )
