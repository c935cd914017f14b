"""A crawl's include/exclude patterns are cheap to compile and may still be costly to match
(RE2's slower engine: ``(?s).{951,1000}y`` at ~11 µs a character): the page's links are
filtered in a process of its own within ``SCRAPEJOBS_LINKS_BUDGET_S``, off the event loop;
past it the page fails ``links_timeout`` naming the budget, and the worker goes on."""

from __future__ import annotations

from datetime import UTC, datetime

import pytest

from scrapejobs_shared.adapters.budgeted_processes import BudgetedProcesses
from scrapejobs_shared.adapters.memory.budgeted_work import InlineWork
from scrapejobs_shared.adapters.memory.job_store import MemoryJobStore
from scrapejobs_shared.domain.crawl_spec import CrawlSpec
from scrapejobs_shared.domain.statuses import TaskStatus
from scrapejobs_shared.ports.budgeted_work import Budget
from scrapejobs_shared.ports.fetcher import FetchRequest, FetchResponse
from scrapejobs_worker.crawl.crawl_expansion import LinkFilter, LinksOverBudget
from support.loop_ticks import ticking
from support.worker_fakes import ScriptedFetcher, build_processor, push, setup_job

NOW = datetime(2026, 12, 2, 10, tzinfo=UTC)
SITE = "http://a.example"
COSTLY = [f"(?s).{{{951 + n},1000}}y" for n in range(50)]  # the review's excludes


def links(count: int) -> list[str]:
    return [f"{SITE}/{n}/" + "a" * 1980 for n in range(count)]


class LinkingFetcher(ScriptedFetcher):
    """A page of fifty links."""

    async def fetch(self, request: FetchRequest) -> FetchResponse:
        if request.url.endswith("/robots.txt"):
            return await super().fetch(request)
        anchors = "".join(f"<a href='{url}'>x</a>" for url in links(50))
        body = f"<html><body><h1>Hi</h1>{anchors}</body></html>".encode()
        return FetchResponse(request.url, 200, {"content-type": "text/html"}, body, elapsed_ms=1)


async def test_costly_excludes_over_ten_thousand_links_fail_clearly_within_the_budget() -> None:
    crawl = CrawlSpec.model_validate({"start_url": f"{SITE}/", "exclude": COSTLY})
    work = BudgetedProcesses(1)
    try:
        budget = Budget("crawl's link filter", "SCRAPEJOBS_LINKS_BUDGET_S", 1.0)
        async with ticking() as ticks:
            with pytest.raises(LinksOverBudget) as raised:
                await LinkFilter(work, budget).candidates(links(10_000), f"{SITE}/", 0, crawl)
        # and cheap patterns over the same links are answered by the same process
        cheap = crawl.model_copy(update={"exclude": ["/private/"], "max_pages": 10_000})
        found = await LinkFilter(work, budget).candidates(links(10_000), f"{SITE}/", 0, cheap)
    finally:
        await work.close()
    assert str(raised.value).startswith(
        "links_timeout: following the page's 10000 links: the crawl's link filter used more "
        "than 1 s of CPU (SCRAPEJOBS_LINKS_BUDGET_S)"
    )
    assert len(found) == 10_000
    assert ticks.count >= 10  # the event loop went on meanwhile


async def test_a_page_whose_links_pass_the_budget_fails_links_timeout() -> None:
    store = MemoryJobStore()
    batch = await setup_job(store, {"crawl": {"start_url": f"{SITE}/"}})
    fetcher = LinkingFetcher(200)
    tight = LinkFilter(InlineWork(), Budget("crawl's link filter", "X", 5.0, output_bytes=512))
    processor = build_processor(store, fetcher, lambda: NOW, links=tight)
    assert (await processor.handle_push(push(batch=batch))).ack  # permanent: never retried
    task = store.results["j"]["t"]
    assert task.status is TaskStatus.FAILED
    assert task.error is not None and task.error.startswith("links_timeout: ")
    assert len(store.batches["j"]) == 1  # no child batch
