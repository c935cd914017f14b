"""Coalesced submissions: small jobs submitted together are created in one store commit and
published as one bundle message; every caller is answered after that commit, and a failure
reaches every caller whose job it concerns (in-memory adapters)."""

from __future__ import annotations

import asyncio
from collections.abc import Sequence
from datetime import UTC, datetime, timedelta

import pytest
from opentelemetry.trace import NoOpTracer

from scrapejobs_dispatcher.jobs.job_parts import JobParts
from scrapejobs_dispatcher.jobs.job_service import JobPolicy
from scrapejobs_dispatcher.submission.intake import JobIntake
from scrapejobs_dispatcher.submission.submission import Submission
from scrapejobs_shared.adapters.memory.job_store import MemoryJobStore
from scrapejobs_shared.adapters.memory.publisher import MemoryTaskPublisher
from scrapejobs_shared.delivery.enqueue import Enqueuer
from scrapejobs_shared.domain.jobspec import JobRequest
from scrapejobs_shared.domain.records import BatchRecord, JobRecord
from scrapejobs_shared.domain.statuses import JobStatus, TaskStatus
from scrapejobs_shared.messaging.task_message import BatchMessage, BundleMessage

T0 = datetime(2026, 11, 25, 12, 0, tzinfo=UTC)
WINDOW_S = 0.01


class CountingStore(MemoryJobStore):
    def __init__(self) -> None:
        super().__init__()
        self.commits: list[list[str]] = []
        self.fail_with: Exception | None = None

    async def create_jobs(
        self, jobs: Sequence[tuple[JobRecord, Sequence[BatchRecord]]]
    ) -> dict[str, str]:
        if self.fail_with is not None:
            raise self.fail_with
        tokens = await super().create_jobs(jobs)
        self.commits.append([job.id for job, _ in jobs])
        return tokens


def service(
    store: MemoryJobStore, publisher: MemoryTaskPublisher | None = None
) -> tuple[JobIntake, MemoryTaskPublisher]:
    publisher = publisher or MemoryTaskPublisher()
    policy = JobPolicy(timedelta(days=1), coalesce_window_s=WINDOW_S)
    jobs = JobIntake(JobParts(store, Enqueuer(store, publisher, lambda: T0, NoOpTracer())), policy)
    return jobs, publisher


def one_url(n: int, **extra: object) -> JobRequest:
    return JobRequest.model_validate(
        {"url": f"http://shop.example/p/{n}", "extract": {"t": {"css": "h1::text"}}, **extra}
    )


async def test_concurrent_small_jobs_share_one_commit_and_one_message() -> None:
    store = CountingStore()
    jobs, publisher = service(store)
    views = await asyncio.gather(*(jobs.submit(Submission(one_url(n))) for n in range(50)))
    ids = [view.job.id for view in views]
    assert len(set(ids)) == 50 and store.commits == [ids]
    [(message, _)] = publisher.published
    assert isinstance(message, BundleMessage)
    assert [batch.job_id for batch in message.batches] == ids
    for view, batch in zip(views, message.batches, strict=True):
        assert batch.spec == view.job.spec  # the worker needs no read of the job
        assert [t.url for t in batch.tasks] == [f"http://shop.example/p/{ids.index(view.job.id)}"]
        assert batch.claim_token  # the job holds its batch: its first claim needs no read
        stored = await store.get_job(view.job.id)
        # published, and marked so by its first claim (a write now would outdate the token)
        assert stored is not None and stored.publishing
        assert view.counts[TaskStatus.QUEUED] == 1


async def test_large_jobs_and_crawls_are_not_coalesced() -> None:
    store = CountingStore()
    jobs, publisher = service(store)
    urls = [f"http://shop.example/p/{n}" for n in range(250)]  # several batches
    crawl = JobRequest.model_validate(
        {"crawl": {"start_url": "http://shop.example/", "max_pages": 5}}
    )
    await asyncio.gather(
        jobs.submit(Submission(JobRequest(urls=urls))), jobs.submit(Submission(crawl))
    )
    assert len(publisher.published) == 4  # 3 batches of the list, the crawl's start page
    assert all(isinstance(message, BatchMessage) for message, _ in publisher.published)


async def test_a_group_over_the_commit_budget_is_split() -> None:
    store = CountingStore()
    jobs, _ = service(store)
    jobs._coalescer._max_writes = 10  # type: ignore[union-attr]  # a document per job
    await asyncio.gather(*(jobs.submit(Submission(one_url(n))) for n in range(25)))
    assert [len(commit) for commit in store.commits] == [10, 10, 5]


async def test_a_failed_commit_answers_every_caller_and_leaves_no_job() -> None:
    store = CountingStore()
    store.fail_with = ConnectionError("firestore went away")
    jobs, publisher = service(store)
    outcomes = await asyncio.gather(
        *(jobs.submit(Submission(one_url(n))) for n in range(5)), return_exceptions=True
    )
    assert all(isinstance(outcome, ConnectionError) for outcome in outcomes)
    assert store.jobs == {} and publisher.published == []


async def test_an_existing_id_in_the_group_answers_that_caller_alone() -> None:
    store = CountingStore()
    jobs, publisher = service(store)
    first = await jobs.submit(Submission(one_url(0), job_id="keyed-job"))
    publisher.published.clear()
    again, *others = await asyncio.gather(
        jobs.submit(Submission(one_url(0), job_id="keyed-job")),
        *(jobs.submit(Submission(one_url(n))) for n in range(3)),
    )
    assert again.job.id == first.job.id and not again.created
    assert all(view.created for view in others) and len(store.jobs) == 4
    published = sorted(batch.job_id for batch, _ in publisher.batches)
    assert published == sorted(view.job.id for view in others)  # the duplicate is not sent


async def test_an_unpublished_bundle_fails_each_job_s_tasks() -> None:
    store = CountingStore()
    jobs, _ = service(store, MemoryTaskPublisher(fail_after=0))
    views = await asyncio.gather(*(jobs.submit(Submission(one_url(n))) for n in range(3)))
    for view in views:
        assert view.counts[TaskStatus.FAILED] == 1
        stored = await store.get_job(view.job.id)
        assert stored is not None and stored.status is JobStatus.COMPLETED


async def test_a_caller_that_goes_away_does_not_stop_the_group() -> None:
    store = CountingStore()
    jobs, publisher = service(store)
    leaving = asyncio.ensure_future(jobs.submit(Submission(one_url(0))))
    staying = asyncio.ensure_future(jobs.submit(Submission(one_url(1))))
    await asyncio.sleep(0)
    leaving.cancel()
    view = await staying
    assert len(store.commits) == 1 and len(store.commits[0]) == 2
    assert len(publisher.batches) == 2 and view.created
    with pytest.raises(asyncio.CancelledError):
        await leaving


async def test_drain_commits_what_is_waiting() -> None:
    store = CountingStore()
    jobs, _ = service(store)
    jobs._coalescer._window_s = 60  # type: ignore[union-attr]
    waiting = asyncio.ensure_future(jobs.submit(Submission(one_url(0))))
    await asyncio.sleep(0)
    await jobs.drain()
    assert (await waiting).created and len(store.commits) == 1


async def test_the_window_widens_only_while_submissions_arrive_fast() -> None:
    jobs, _ = service(CountingStore())
    coalescer = jobs._coalescer
    assert coalescer is not None
    coalescer._busy_window_s = 0.05  # more than one arrival per 50 ms is busy
    windows = [coalescer._window_on_arrival() for _ in range(30)]
    assert windows[0] == WINDOW_S  # a lone caller waits the short window
    assert windows[-1] == 0.05 and windows.index(0.05) == 20  # 21 arrivals within a second
