"""A bundle message (coalesced small jobs): its batches run side by side within one push,
claimed in one store call, each settled on its own; the push acks when every batch is done,
and a redelivery after a nack runs only what is still open (in-memory adapters, scripted
fetchers)."""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime, timedelta

from scrapejobs_shared.adapters.memory.job_store import MemoryJobStore
from scrapejobs_shared.delivery.enqueue import REVIVALS, message_of
from scrapejobs_shared.domain.jobspec import JobRequest, JobSpec
from scrapejobs_shared.domain.records import BatchItem, BatchRecord, JobRecord
from scrapejobs_shared.domain.statuses import JobStatus, TaskStatus
from scrapejobs_shared.messaging.task_message import BundleMessage
from scrapejobs_shared.ports.batch_store import ClaimResult, JointClaim
from scrapejobs_shared.ports.fetcher import TransientFetchError
from scrapejobs_worker.lanes.dead_letters import MAX_REVIVALS
from support.worker_fakes import NOW, PerUrlFetcher, build_processor, push

JOBS = 3


class ReadCountingStore(MemoryJobStore):
    def __init__(self) -> None:
        super().__init__()
        self.job_reads = 0
        self.count_reads = 0
        self.claimed_together: list[list[str]] = []  # job ids of each joint call

    async def claim_together(
        self, claims: Sequence[JointClaim], now: datetime, lease_until: datetime
    ) -> list[ClaimResult]:
        self.claimed_together.append([claim.job_id for claim in claims])
        return await super().claim_together(claims, now, lease_until)


def url(n: int) -> str:
    return f"http://shop{n}.example/p"


async def small_jobs(store: MemoryJobStore) -> bytes:
    """``JOBS`` one-URL jobs, as the dispatcher coalesces them: one bundle, specs inside."""
    batches = []
    for n in range(JOBS):
        request = JobRequest.model_validate({"url": url(n), "extract": {"h": {"css": "h1::text"}}})
        spec = JobSpec.from_request(request)
        job = JobRecord(f"j{n}", JobStatus.QUEUED, spec, NOW, NOW, NOW + timedelta(days=1))
        batch = BatchRecord(f"j{n}", f"b{n}", (BatchItem(f"t{n}", url(n)),), NOW, NOW)
        tokens = await store.create_jobs([(job, [batch])])
        batches.append(message_of(batch, spec, tokens[job.id]))
    return BundleMessage(batches=tuple(batches)).encode()


def status(store: MemoryJobStore, n: int) -> TaskStatus:
    return store.batches[f"j{n}"][f"b{n}"].items[0].status


async def test_a_bundle_runs_its_jobs_side_by_side_without_reading_them() -> None:
    store = ReadCountingStore()
    payload = await small_jobs(store)
    fetcher = PerUrlFetcher({}, delay_s=0.05)
    verdict = await build_processor(store, fetcher, lambda: NOW).handle_push(push(payload))
    assert verdict.ack, verdict.reason
    assert fetcher.max_in_flight == JOBS  # side by side, not one after another
    for n in range(JOBS):
        assert store.results[f"j{n}"][f"t{n}"].data == {"h": "Hello"}
        assert store.jobs[f"j{n}"].status is JobStatus.COMPLETED
        assert store.jobs[f"j{n}"].started_at == NOW  # recorded by its first claim
    assert store.job_reads == 0  # each batch carried its job's spec
    assert all(store.claim_tokens) and len(store.claim_tokens) == JOBS  # and its claim token
    assert store.count_reads == 0  # and its one batch closed: no open task is left
    assert store.claimed_together == [[f"j{n}" for n in range(JOBS)]]  # one claim for all


async def test_a_job_cancelled_before_its_bundle_runs_stays_cancelled_beside_the_others() -> None:
    store = ReadCountingStore()
    payload = await small_jobs(store)
    assert await store.cancel_job("j1", NOW)
    fetcher = PerUrlFetcher({})
    verdict = await build_processor(store, fetcher, lambda: NOW).handle_push(push(payload))
    assert verdict.ack, verdict.reason
    assert url(1) not in [call.url for call in fetcher.calls]
    assert store.jobs["j1"].status is JobStatus.CANCELLED
    assert status(store, 1) is TaskStatus.CANCELLED
    for n in (0, 2):
        assert store.jobs[f"j{n}"].status is JobStatus.COMPLETED
        assert status(store, n) is TaskStatus.SUCCEEDED


async def test_a_transient_failure_nacks_the_bundle_and_the_redelivery_runs_only_it() -> None:
    store = ReadCountingStore()
    payload = await small_jobs(store)
    fetcher = PerUrlFetcher({url(1): [TransientFetchError("reset"), 200]})
    processor = build_processor(store, fetcher, lambda: NOW)
    first = await processor.handle_push(push(payload))
    assert not first.ack
    assert [status(store, n) for n in range(JOBS)] == [
        TaskStatus.SUCCEEDED,
        TaskStatus.RUNNING,  # open, its error kept, for the redelivery
        TaskStatus.SUCCEEDED,
    ]
    assert store.jobs["j0"].status is JobStatus.COMPLETED
    fetched = len(fetcher.calls)
    second = await processor.handle_push(push(payload))
    assert second.ack and status(store, 1) is TaskStatus.SUCCEEDED
    assert [call.url for call in fetcher.calls[fetched:]] == [url(1)]  # nothing fetched twice
    assert store.results["j1"]["t1"].attempts == 2


async def test_a_dead_lettered_bundle_ends_each_job_s_open_tasks() -> None:
    store = ReadCountingStore()
    payload = await small_jobs(store)
    processor = build_processor(store, PerUrlFetcher({}), lambda: NOW)
    verdict = await processor.handle_dead_letter(push(payload, **{REVIVALS: str(MAX_REVIVALS)}))
    assert verdict.ack
    for n in range(JOBS):
        assert status(store, n) is TaskStatus.DEAD_LETTERED
        assert store.jobs[f"j{n}"].status is JobStatus.COMPLETED


async def test_a_malformed_bundle_is_recorded_and_acked() -> None:
    store = ReadCountingStore()
    processor = build_processor(store, PerUrlFetcher({}), lambda: NOW)
    verdict = await processor.handle_push(push(b'{"batches": [{"job_id": "j"}]}'))
    assert verdict.ack and len(store.rejected) == 1
