"""A batch that meets a dependency outage (an adapter's ``DependencyUnavailable``): the task
is released without spending an attempt, no other task starts, the delivery is nacked; the
results it holds are written if the store answers again before the answer is due."""

from __future__ import annotations

import time
from datetime import timedelta
from typing import Any

import pytest

from scrapejobs_shared.adapters.memory.job_store import MemoryJobStore
from scrapejobs_shared.domain.batch_transitions import FinishTask
from scrapejobs_shared.domain.records import TaskOutcome
from scrapejobs_shared.domain.statuses import TaskStatus
from scrapejobs_shared.ports.batch_store import BatchClaim, Claimed
from scrapejobs_shared.ports.dependency_unavailable import FIRESTORE, DependencyUnavailable
from scrapejobs_worker.batches.batch_recorder import BatchRecorder
from scrapejobs_worker.batches.worker_heartbeat import WorkerHeartbeat
from scrapejobs_worker.delivery.push_delivery import BatchPolicy
from support.worker_fakes import NOW, PerUrlFetcher, build_processor, push, setup_job

URL = "http://a.example/"
OUTAGE = DependencyUnavailable(FIRESTORE, 5.0)


async def test_a_task_that_meets_an_outage_spends_no_attempt_and_no_other_task_starts() -> None:
    store = MemoryJobStore()
    batch = await setup_job(store, urls=6)
    # one lane: the first page meets the outage, the five others must not be fetched
    fetcher = PerUrlFetcher({URL: [OUTAGE, 200]})
    processor = build_processor(store, fetcher, lambda: NOW, batch=BatchPolicy(concurrency=1))
    verdict = await processor.handle_push(push(batch=batch))
    assert not verdict.ack  # nacked: Pub/Sub redelivers
    assert [call.url for call in fetcher.calls] == [URL]
    first = next(i for i in store.batches["j"]["b"].items if i.task_id == "t")
    assert first.attempts == 0 and first.error is not None
    assert first.error.startswith("dependency_unavailable: Firestore")

    again = await processor.handle_push(push(batch=batch))
    assert again.ack
    assert all(r.status is TaskStatus.SUCCEEDED for r in store.results["j"].values())
    assert len(store.results["j"]) == 6 and store.results["j"]["t"].attempts == 1
    assert len(fetcher.calls) == 7  # the released page once more, every other page once


class FlakyStore(MemoryJobStore):
    """Its settles meet the outage ``failing`` times, then answer."""

    failing = 0

    async def settle(self, *args: Any, **kwargs: Any) -> Any:
        if self.failing:
            self.failing -= 1
            raise OUTAGE
        return await super().settle(*args, **kwargs)


async def _recorder(store: FlakyStore) -> tuple[BatchRecorder, Any]:
    batch = await setup_job(store)
    claimed = await store.claim_batch(BatchClaim("j", batch.id, NOW, NOW + timedelta(seconds=30)))
    assert isinstance(claimed, Claimed)
    recorder = BatchRecorder(
        store, claimed.handle, lambda: NOW, interval_s=60, lease=timedelta(seconds=30)
    )
    finished = FinishTask("t", TaskOutcome(TaskStatus.SUCCEEDED, http_status=200))
    return recorder, finished


async def test_held_results_are_written_once_the_store_answers_again() -> None:
    store = FlakyStore()
    recorder, finished = await _recorder(store)
    recorder.add(finished)
    store.failing = 2
    await recorder.close(keep_trying_until=time.monotonic() + 30)
    assert store.results["j"]["t"].status is TaskStatus.SUCCEEDED


async def test_without_results_held_or_time_left_the_outage_is_raised_at_once() -> None:
    store = FlakyStore()
    recorder, finished = await _recorder(store)
    store.failing = 1
    with pytest.raises(DependencyUnavailable):  # nothing fetched would be lost
        await recorder.close(keep_trying_until=time.monotonic() + 30)

    store = FlakyStore()
    recorder, finished = await _recorder(store)
    recorder.add(finished)
    store.failing = 5
    with pytest.raises(DependencyUnavailable):  # the answer is due
        await recorder.close(keep_trying_until=time.monotonic() + 0.5)
    assert "t" not in store.results["j"]


async def test_a_batch_whose_last_write_meets_the_outage_is_no_longer_in_flight() -> None:
    """The worker's report counts the batches it runs: one whose close raised (the delivery
    is nacked and redelivered) is not running here any more."""
    store = FlakyStore()
    batch = await setup_job(store)
    heartbeat = WorkerHeartbeat(None, lambda: NOW, "local")
    policy = BatchPolicy(ack_deadline_s=12, lease_s=6)  # its last write tried for 2 s
    processor = build_processor(
        store, PerUrlFetcher({}), lambda: NOW, batch=policy, heartbeat=heartbeat
    )
    store.failing = 10**6
    with pytest.raises(DependencyUnavailable):
        await processor.handle_push(push(batch=batch))
    assert heartbeat.batches_in_flight == 0
