"""Crawl jobs: the pages one page discovers become one batch of new tasks, each page once per
job.

Which links are a crawl's pages is the crawl's include/exclude patterns' to say, and their
cost is the caller's to choose: RE2 matches in time linear in a path, but a pattern such as
``(?s).{951,1000}y`` runs on its slower engine (~11 µs a character), and fifty of them over a
page of 2,000-character links cost an hour of CPU. So the links are filtered through the
budgeted-work port (ports/budgeted_work.py: a process of its own, off the event loop) within
``SCRAPEJOBS_LINKS_BUDGET_S`` of CPU; past it the page fails ``links_timeout`` naming the
budget (:class:`LinksOverBudget`, permanent: the same links would cost the same again).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, replace
from functools import partial
from typing import Protocol

from scrapejobs_shared.delivery.batching import plan_batches
from scrapejobs_shared.domain.clock import Clock
from scrapejobs_shared.domain.crawl_identity import crawl_task_id
from scrapejobs_shared.domain.crawl_spec import CrawlSpec
from scrapejobs_shared.domain.jobspec import JobSpec
from scrapejobs_shared.domain.records import BatchItem, BatchRecord
from scrapejobs_shared.errors import WorkFailed
from scrapejobs_shared.messaging.task_message import MAX_BATCH_SIZE
from scrapejobs_shared.ports.batch_store import BatchStore
from scrapejobs_shared.ports.budgeted_work import Budget, BudgetedWork, OverBudget
from scrapejobs_worker.crawl.crawl_frontier import CrawlCandidate, next_candidates


class LinksOverBudget(WorkFailed):
    """Filtering a page's links through the crawl's patterns passed its budget."""

    def __init__(self, links: int, exceeded: OverBudget) -> None:
        super().__init__(
            f"links_timeout: following the page's {links} links: {exceeded}; give the crawl "
            "fewer or simpler include/exclude patterns"
        )
        self.error = str(self)


@dataclass(frozen=True)
class LinkFilter:
    """The crawl's candidates among a page's links, found within ``budget``."""

    work: BudgetedWork
    budget: Budget

    async def candidates(
        self, links: Sequence[str], page_url: str, depth: int, crawl: CrawlSpec, tenant: str = ""
    ) -> list[CrawlCandidate]:
        """``tenant``: whose crawl it is (tenants waiting for the process take turns)."""
        if not links or depth >= crawl.max_depth:
            return []
        try:
            found = partial(next_candidates, page_url=page_url, page_depth=depth, crawl=crawl)
            return await self.work.run(replace(self.budget, owner=tenant), found, list(links))
        except OverBudget as exc:
            raise LinksOverBudget(len(links), exc) from None


class FoundBatches(Protocol):
    """Where a crawl's found batches go once stored (batches/held_chain.py's HeldChain)."""

    @property
    def holds(self) -> bool:
        """Whether they are stored held, for it to release."""

    async def found(self, batches: Sequence[BatchRecord]) -> None:
        """Publish them, or those their hosts' windows allow."""


class CrawlExpansion:
    def __init__(
        self, store: BatchStore, chain: FoundBatches, clock: Clock, links: LinkFilter
    ) -> None:
        self._store = store
        self._chain = chain
        self._clock = clock
        self._links = links

    async def expand(
        self,
        spec: JobSpec,
        parent: BatchRecord,
        parent_task: BatchItem,
        page_url: str,
        links: Sequence[str],
    ) -> int:
        """Create the children of ``parent_task`` of the crawl job ``spec``, in its lane
        (documents in theirs), held, and release them as their host's window allows
        (held_chain.py); returns how many were new.

        Runs before the parent is settled, so the job cannot complete in between. The child
        batches' ids derive from the parent task, so a redelivered parent (its worker died
        before publishing) finds them again and publishes what is still open (duplicates are
        harmless: a batch is claimed by one delivery at a time and finished tasks are skipped).
        A child released but not published (it died in between) is the reconcile's.
        """
        if spec.crawl is None:
            return 0
        candidates = await self._links.candidates(
            links, page_url, parent_task.depth, spec.crawl, parent.tenant
        )
        return await self._add(spec, parent, candidates, f"crawl:{parent_task.task_id}")

    async def expand_sitemap(
        self, spec: JobSpec, parent: BatchRecord, start_task: BatchItem, pages: Sequence[str]
    ) -> int:
        """Create and publish the pages the site's sitemaps list, in the crawl's scope, at
        depth 0 (as Firecrawl counts them); their batch ids derive from the start task, apart
        from its links'."""
        if spec.crawl is None:
            return 0
        candidates = await self._links.candidates(
            pages, start_task.url, -1, spec.crawl, parent.tenant
        )
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
        if self._chain.holds:
            planned = [replace(batch, held=True) for batch in planned]
        stored: list[BatchRecord] = []
        new = 0
        for batch in planned:
            added = await self._store.add_batch(batch, max_new=crawl.max_pages - 1)
            if added is not None:
                stored.append(added)
                new += len(added.items)
        await self._chain.found(stored)
        return new
