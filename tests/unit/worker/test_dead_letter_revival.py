"""A dead letter of deliveries that never reached a worker (a worker down longer than the
retries' backoff): tasks with attempts left go out again, a few times; spent ones end
dead-lettered. Over in-memory adapters."""

from __future__ import annotations

from scrapejobs_shared.adapters.memory.job_store import MemoryJobStore
from scrapejobs_shared.adapters.memory.publisher import MemoryTaskPublisher
from scrapejobs_shared.delivery.enqueue import REVIVALS
from scrapejobs_shared.domain.batch_transitions import ReleaseTask
from scrapejobs_shared.domain.statuses import JobStatus, TaskStatus
from scrapejobs_shared.messaging.task_message import PushedMessage
from scrapejobs_shared.messaging.topology import LANE_ATTRIBUTE
from scrapejobs_shared.ports.batch_store import BatchClaim, Claimed
from scrapejobs_worker.delivery.push_delivery import BatchPolicy
from scrapejobs_worker.lanes.dead_letters import MAX_REVIVALS
from support.worker_fakes import NOW, PerUrlFetcher, build_processor, push, setup_job


def statuses(store: MemoryJobStore) -> list[TaskStatus]:
    return [item.status for item in store.batches["j"]["b"].items]


async def test_tasks_no_worker_ran_go_out_again_and_complete() -> None:
    store, publisher = MemoryJobStore(), MemoryTaskPublisher()
    batch = await setup_job(store, urls=3)
    fetcher = PerUrlFetcher({})
    processor = build_processor(store, fetcher, lambda: NOW, publisher=publisher)

    verdict = await processor.handle_dead_letter(push(batch=batch, **{LANE_ATTRIBUTE: "high"}))

    assert verdict.ack and verdict.reason == "revived"
    assert statuses(store) == [TaskStatus.QUEUED] * 3 and fetcher.calls == []
    [(message, attributes)] = publisher.batches
    assert [t.id for t in message.tasks] == [i.task_id for i in batch.items]
    assert attributes[REVIVALS] == "1" and attributes[LANE_ATTRIBUTE] == "high"
    again = await processor.handle_push(PushedMessage("m2", message.encode(), attributes, "s", 1))
    assert again.ack and statuses(store) == [TaskStatus.SUCCEEDED] * 3
    assert all(r.attempts == 1 for r in store.results["j"].values())
    assert store.jobs["j"].status is JobStatus.COMPLETED


async def test_spent_tasks_end_and_the_rest_go_out_again() -> None:
    store, publisher = MemoryJobStore(), MemoryTaskPublisher()
    batch = await setup_job(store, urls=2)
    spent, left = (item.task_id for item in batch.items)
    # a claim whose worker died (its lease lapsed): one attempt each, the second's given back
    claimed = await store.claim_batch(BatchClaim("j", "b", NOW, NOW))
    assert isinstance(claimed, Claimed)
    await store.settle(claimed.handle, [ReleaseTask(left, "outage", refund_attempt=True)], NOW)
    policy = BatchPolicy(lease_s=6, max_delivery_attempts=1)  # one attempt spends a task's
    processor = build_processor(
        store, PerUrlFetcher({}), lambda: NOW, publisher=publisher, batch=policy
    )

    verdict = await processor.handle_dead_letter(push(batch=batch))

    assert verdict.ack and verdict.reason == "revived"
    assert statuses(store)[0] is TaskStatus.DEAD_LETTERED
    assert store.results["j"][spent].status is TaskStatus.DEAD_LETTERED
    [(message, _)] = publisher.batches
    assert [t.id for t in message.tasks] == [left]


async def test_after_its_last_return_a_dead_letter_ends_every_open_task() -> None:
    store, publisher = MemoryJobStore(), MemoryTaskPublisher()
    batch = await setup_job(store, urls=2)
    processor = build_processor(store, PerUrlFetcher({}), lambda: NOW, publisher=publisher)

    verdict = await processor.handle_dead_letter(push(batch=batch, **{REVIVALS: str(MAX_REVIVALS)}))

    assert verdict.ack and verdict.reason == "dead-lettered" and publisher.batches == []
    assert statuses(store) == [TaskStatus.DEAD_LETTERED] * 2
    assert store.jobs["j"].status is JobStatus.COMPLETED


async def test_a_dead_letter_that_cannot_go_out_again_is_tried_later() -> None:
    store = MemoryJobStore()
    batch = await setup_job(store, urls=1)
    publisher = MemoryTaskPublisher(fail_after=0)
    processor = build_processor(store, PerUrlFetcher({}), lambda: NOW, publisher=publisher)

    verdict = await processor.handle_dead_letter(push(batch=batch))

    assert not verdict.ack and statuses(store) == [TaskStatus.QUEUED]
