"""A running batch's recorder: it commits what it has to record at least every interval, and
with nothing to record it reads whether its job was cancelled instead of committing, renewing
its lease only every third of it; a batch that defers tasks keeps its lease an interval
past its last write."""

from __future__ import annotations

import asyncio
import time
from datetime import UTC, datetime, timedelta
from typing import Any

import pytest

from scrapejobs_shared.adapters.memory.job_store import MemoryJobStore
from scrapejobs_shared.domain.batch_transitions import FinishTask
from scrapejobs_shared.domain.records import TaskOutcome
from scrapejobs_shared.domain.statuses import TaskStatus
from scrapejobs_shared.ports.batch_store import BatchClaim, Busy, Claimed
from scrapejobs_shared.ports.dependency_unavailable import FIRESTORE, DependencyUnavailable
from scrapejobs_worker.batches.batch_recorder import BatchRecorder
from support.worker_fakes import setup_job

INTERVAL_S = 0.05


class CallsKept(MemoryJobStore):
    """The twin, with its settles and cancel reads counted."""

    settles = 0
    looks = 0

    async def settle(self, *args: Any, **kwargs: Any) -> Any:
        self.settles += 1
        return await super().settle(*args, **kwargs)

    async def cancel_heard(self, handle: object) -> bool:
        self.looks += 1
        return await super().cancel_heard(handle)


async def _running(store: CallsKept, lease: timedelta) -> BatchRecorder:
    batch = await setup_job(store, urls=2)
    now = datetime.now(UTC)
    claimed = await store.claim_batch(BatchClaim("j", batch.id, now, now + lease))
    assert isinstance(claimed, Claimed)
    recorder = BatchRecorder(
        store,
        claimed.handle,
        lambda: datetime.now(UTC),
        interval_s=INTERVAL_S,
        lease=lease,
    )
    recorder.start()
    return recorder


async def test_a_batch_with_nothing_to_record_reads_for_a_cancel_and_writes_nothing() -> None:
    store = CallsKept()
    recorder = await _running(store, timedelta(seconds=60))
    await asyncio.sleep(INTERVAL_S * 8)
    assert store.settles == 0 and store.looks >= 3
    assert await store.cancel_job("j", datetime.now(UTC))
    for _ in range(100):  # heard at its next look, without a write
        if recorder.cancelled:
            break
        await asyncio.sleep(INTERVAL_S / 2)
    assert recorder.cancelled and store.settles == 0
    await recorder.close()
    assert store.settles == 1  # the last write gives the lease back


async def test_what_there_is_to_record_is_committed_within_the_interval() -> None:
    store = CallsKept()
    recorder = await _running(store, timedelta(seconds=60))
    recorder.add(FinishTask("t", TaskOutcome(TaskStatus.SUCCEEDED, http_status=200)))
    for _ in range(100):
        if store.settles:
            break
        await asyncio.sleep(INTERVAL_S / 2)
    assert store.settles == 1 and recorder.finished == 1
    await recorder.close()


async def test_a_batch_with_nothing_to_record_still_renews_its_lease() -> None:
    store = CallsKept()
    lease = timedelta(seconds=0.6)  # renewed every 0.2 s
    recorder = await _running(store, lease)
    await asyncio.sleep(1.0)
    assert store.settles >= 2
    batch = store.batches["j"]["b"]
    assert batch.lease_until is not None and batch.lease_until > datetime.now(UTC)
    await recorder.close()


async def test_a_deferring_batch_keeps_its_lease_an_interval_past_its_last_write() -> None:
    """When it committed while it ran: its remainder's delivery, claiming at once, waits the
    interval out (Busy), and the batch's document rests between the last write and that
    claim."""
    store = CallsKept()
    recorder = await _running(store, timedelta(seconds=60))
    recorder.add(FinishTask("t", TaskOutcome(TaskStatus.SUCCEEDED, http_status=200)))
    for _ in range(100):  # a commit while it runs
        if store.settles:
            break
        await asyncio.sleep(INTERVAL_S / 10)
    await recorder.close(rested=True)
    closed = datetime.now(UTC)
    lease_until = store.batches["j"]["b"].lease_until
    assert lease_until is not None
    assert closed < lease_until <= closed + timedelta(seconds=INTERVAL_S)
    busy = await store.claim_batch(BatchClaim("j", "b", closed, closed + timedelta(seconds=9)))
    assert isinstance(busy, Busy)
    later = lease_until + timedelta(milliseconds=1)
    again = await store.claim_batch(BatchClaim("j", "b", later, later + timedelta(seconds=9)))
    assert isinstance(again, Claimed)

    for rested in (False, True):  # one that ends; one deferred before any commit
        store = CallsKept()
        recorder = await _running(store, timedelta(seconds=60))
        await recorder.close(rested=rested)  # gives it back
        lease_until = store.batches["j"]["b"].lease_until
        assert lease_until is not None and lease_until <= datetime.now(UTC)


class Refusing(CallsKept):
    """Its settles are refused (a store that does not answer, a contended document)."""

    async def settle(self, *args: Any, **kwargs: Any) -> Any:
        self.settles += 1
        await asyncio.sleep(0)  # an answer takes a moment
        raise DependencyUnavailable(FIRESTORE, 1.0)


async def test_a_refused_commit_is_tried_again_at_the_next_tick_not_at_once() -> None:
    """A failed commit is tried an interval later: tried again at once, it hammered the store
    (``make scale``: refused for a new collection's ramp, the million URLs' batches retried
    in a loop, 20 minutes of CPU not done)."""
    store = Refusing()
    recorder = await _running(store, timedelta(seconds=60))
    recorder.add(FinishTask("t", TaskOutcome(TaskStatus.SUCCEEDED, http_status=200)))
    began = time.monotonic()
    await asyncio.sleep(INTERVAL_S * 10)
    ticks = (time.monotonic() - began) / INTERVAL_S
    assert 2 <= store.settles <= ticks + 2  # one a tick
    with pytest.raises(DependencyUnavailable):
        await recorder.close()
