"""A job with ``cache_max_age_s`` reuses the pages an earlier job kept (``cache_store``): no
fetch, the kept outcome, its first fetch's time; a page kept too long ago, another result's
page, a crawl, a cache that does not answer: fetched as ever; a task the claim finds finished
is not taken from the cache."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from typing import Any

from scrapejobs_shared.adapters.memory.job_store import MemoryJobStore
from scrapejobs_shared.adapters.memory.webhooks import MemoryWebhookOutbox
from scrapejobs_shared.delivery.job_events import JobEvents
from scrapejobs_shared.domain.batch_transitions import FinishTask
from scrapejobs_shared.domain.jobspec import JobSpec
from scrapejobs_shared.domain.records import TaskOutcome
from scrapejobs_shared.domain.statuses import TaskStatus
from scrapejobs_shared.ports.batch_store import BatchClaim, Claimed
from scrapejobs_worker.batches.page_reuse import PageReuse
from support.worker_fakes import ScriptedFetcher, build_processor, push, setup_job

T0 = datetime(2026, 11, 26, 10, tzinfo=UTC)
FIELDS = {"h": {"css": "h1::text"}}


class Clock:
    def __init__(self) -> None:
        self.now = T0

    def __call__(self) -> datetime:
        return self.now


def body(**options: Any) -> dict[str, Any]:
    return {"url": "http://a.example/", "extract": FIELDS, "options": options}


_jobs = iter(range(1_000_000))


async def run(
    clock: Clock,
    job: dict[str, Any],
    store: MemoryJobStore,
    urls: int = 3,
    tenant: str = "default",
) -> tuple[dict[str, Any], Any]:
    """A new job of ``job`` run once in ``store`` (its own page cache, as Firestore's is the
    store's commits); its results by task id, and the fetcher."""
    fetcher, job_id = ScriptedFetcher(200), f"j{next(_jobs)}"
    batch = await setup_job(store, job, urls=urls, job_id=job_id, tenant=tenant)
    processor = build_processor(store, fetcher, clock, page_cache=store)
    assert (await processor.handle_push(push(batch=batch))).ack
    return store.results[job_id], fetcher


async def test_a_kept_page_is_reused_without_a_fetch_while_young_enough() -> None:
    store, clock = MemoryJobStore(), Clock()
    keeping = body(cache_store=True, cache_max_age_s=600)
    _, first = await run(clock, keeping, store)
    assert len(first.calls) == 3 and len(store.kept_pages) == 3

    clock.now = T0 + timedelta(minutes=5)
    results, again = await run(clock, keeping, store)
    assert again.calls == []  # every page reused
    assert len(results) == 3
    for task in results.values():
        assert task.status is TaskStatus.SUCCEEDED and task.data == {"h": "Hello"}
        assert task.fetched_at == T0 and task.http_status == 200

    clock.now = T0 + timedelta(minutes=11)  # older than the 600 s this job accepts
    _, stale = await run(clock, keeping, store)
    assert len(stale.calls) == 3


async def test_other_results_crawls_gone_results_and_jobs_without_an_age_fetch() -> None:
    store, clock = MemoryJobStore(), Clock()
    await run(clock, body(cache_store=True), store)
    assert len(store.kept_pages) == 3
    _, no_age = await run(clock, body(), store)  # cache_max_age_s 0: no read at all
    assert len(no_age.calls) == 3 and store.page_cache_reads == 0

    other = {"url": "http://a.example/", "extract": {"t": {"css": "title::text"}}}
    other["options"] = {"cache_max_age_s": 600}
    _, other_result = await run(clock, other, store)
    assert len(other_result.calls) == 3

    crawl = {"crawl": {"start_url": "http://a.example/", "max_depth": 0}, "extract": FIELDS}
    crawl["options"] = {"cache_max_age_s": 600, "cache_store": True}
    _, crawled = await run(clock, crawl, store, urls=1)
    assert len(crawled.calls) == 1 and len(store.kept_pages) == 3  # neither read nor kept

    for job_id in list(store.jobs):
        await store.delete_job(job_id)  # the results the entries name are gone
    _, gone = await run(clock, body(cache_max_age_s=600), store)
    assert len(gone.calls) == 3


class DownCache(MemoryJobStore):
    async def get_many(self, keys, fetched_after):  # type: ignore[no-untyped-def]
        raise RuntimeError("firestore is not answering")


async def test_a_tenant_reuses_only_its_own_tenants_pages() -> None:
    """Another tenant's job fetches its pages itself: whether (and when) a tenant fetched a
    URL is not another's to learn from cacheState or cachedAt."""
    store, clock = MemoryJobStore(), Clock()
    keeping = body(cache_store=True, cache_max_age_s=600)
    await run(clock, keeping, store, tenant="team-a")
    clock.now = T0 + timedelta(minutes=5)
    _, theirs = await run(clock, keeping, store, tenant="team-b")
    assert len(theirs.calls) == 3  # fetched, none reused
    _, ours = await run(clock, keeping, store, tenant="team-a")
    assert ours.calls == []  # the keeper's own tenant reuses them


async def test_a_cache_that_does_not_answer_fetches_every_page() -> None:
    keeping = body(cache_store=True, cache_max_age_s=60)
    results, fetched = await run(Clock(), keeping, DownCache())
    assert len(fetched.calls) == 3
    assert all(t.status is TaskStatus.SUCCEEDED for t in results.values())


async def test_only_the_tasks_the_claim_finds_open_are_taken_from_the_cache() -> None:
    store, clock = MemoryJobStore(), Clock()
    keeping = body(cache_store=True, cache_max_age_s=600)
    await run(clock, keeping, store)  # all three pages kept
    fetcher, outbox = ScriptedFetcher(200), MemoryWebhookOutbox()
    hooked = keeping | {"webhook": {"url": "http://h.example/", "events": ["task.finished"]}}
    batch = await setup_job(store, hooked, urls=3, job_id="hooked")
    claim = await store.claim_batch(BatchClaim("hooked", "b", T0, T0 + timedelta(seconds=30)))
    assert isinstance(claim, Claimed)
    failed = TaskOutcome(TaskStatus.FAILED, http_status=404, error="HTTP 404")
    await store.settle(claim.handle, [FinishTask("t1", failed)], T0)  # a delivery ended t1
    clock.now = T0 + timedelta(minutes=1)  # its lease is over
    events = JobEvents(store, outbox)
    processor = build_processor(store, fetcher, clock, page_cache=store, events=events)
    assert (await processor.handle_push(push(batch=batch))).ack
    assert fetcher.calls == []
    results = store.results["hooked"]
    assert results["t1"].status is TaskStatus.FAILED  # not rewritten from the cache
    assert sorted(e.data["task_id"] for e in outbox.events) == ["t", "t2"]  # nor announced
    assert results["t2"].status is TaskStatus.SUCCEEDED


async def test_a_job_whose_first_batches_found_nothing_reads_one_batch_in_ten() -> None:
    store, clock = MemoryJobStore(), Clock()
    reuse = PageReuse(store, store, clock)
    spec = JobSpec.model_validate({"extract": FIELDS, "options": {"cache_max_age_s": 600}})
    items = [("t", "http://a.example/new")]
    for _ in range(2 + 20):
        assert await reuse.reused("big", spec, items, "default") == []
    assert store.page_cache_reads == 2 + 2  # two, then one in ten
    assert await reuse.reused("other", spec, items, "default") == []  # another job reads on its own
    assert store.page_cache_reads == 5

    await run(clock, body(cache_store=True), store)  # now some of big's pages are kept
    kept = [("t", "http://a.example/")]
    found = [await reuse.reused("big", spec, kept, "default") for _ in range(10)]
    assert sum(1 for results in found if results) == 1  # the sampled read finds them...
    again = [await reuse.reused("big", spec, kept, "default") for _ in range(3)]
    assert all(again)  # ...then every batch reads again


async def test_a_page_whose_certificate_failed_is_never_kept() -> None:
    store, clock = MemoryJobStore(), Clock()
    job = body(cache_store=True, verify_tls=False)
    fetcher, job_id = ScriptedFetcher(200, failing_certificate=True), "unverified"
    batch = await setup_job(store, job, urls=2, job_id=job_id)
    processor = build_processor(store, fetcher, clock, page_cache=store)
    assert (await processor.handle_push(push(batch=batch))).ack

    assert all(not call.route.verify_tls for call in fetcher.calls)
    results = store.results[job_id].values()
    assert all(t.status is TaskStatus.SUCCEEDED and t.tls_unverified for t in results)
    assert store.kept_pages == {}  # served to no other job


async def test_a_failing_certificate_fails_a_job_that_verifies() -> None:
    store, clock = MemoryJobStore(), Clock()
    fetcher = ScriptedFetcher(200, failing_certificate=True)
    batch = await setup_job(store, body(), urls=1, job_id="verifying")
    processor = build_processor(store, fetcher, clock, page_cache=store)
    assert (await processor.handle_push(push(batch=batch))).ack

    [task] = store.results["verifying"].values()
    assert task.status is TaskStatus.FAILED and task.error is not None
    assert task.error.startswith("tls_error") and not task.tls_unverified
