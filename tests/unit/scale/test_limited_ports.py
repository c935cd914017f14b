"""The twins behind the limits model fail as the Firestore adapters do: a transaction on a busy
document is tried again in the adapter's rounds, on the simulated clock, then ends
``Contended``; a blind write is ``Contended`` at once; a host slot whose pace document is busy
is a refusal (a Throttle), its slot given back; a refused call changes nothing."""

from __future__ import annotations

import asyncio
import contextlib
from datetime import timedelta

import pytest
from google.api_core import exceptions as gexc

from scrapejobs_scale.document_ledger import DocumentLedger
from scrapejobs_scale.limited_ports import LimitedPorts
from scrapejobs_scale.limits import FirestoreLimits
from scrapejobs_scale.virtual_clock import START, VirtualClock
from scrapejobs_shared.adapters.firestore.store_base import TRANSACTION_ROUNDS
from scrapejobs_shared.domain.jobspec import JobSpec
from scrapejobs_shared.domain.records import JobRecord
from scrapejobs_shared.domain.statuses import JobStatus
from scrapejobs_shared.politeness import host_gate as gate
from scrapejobs_shared.ports.dependency_unavailable import Contended

from .simulated import simulated


def ports_with(clock: VirtualClock, burst: float = 10.0) -> LimitedPorts:
    return LimitedPorts(DocumentLedger(FirestoreLimits(burst_writes_per_doc=burst)), clock)


def job_record(job_id: str) -> JobRecord:
    return JobRecord(
        id=job_id,
        status=JobStatus.QUEUED,
        spec=JobSpec(),
        created_at=START,
        updated_at=START,
        expire_at=START + timedelta(days=1),
        total=0,
    )


def test_a_transaction_on_a_busy_document_is_retried_in_rounds_then_contended() -> None:
    async def main(clock: VirtualClock) -> tuple[int, float, JobStatus, int]:
        ports = ports_with(clock, burst=1.0)
        await ports.store.create_job(job_record("j1"), [])
        hog = asyncio.ensure_future(hogging(ports.ledger, clock, "jobs/j1"))
        began = clock.now_s
        with pytest.raises(Contended) as refused:
            await ports.store.set_job_status("j1", JobStatus.RUNNING, clock.utc())
        hog.cancel()
        assert refused.value.document == "jobs/j1"
        job = await ports.twins.store.get_job("j1")
        assert job is not None
        return ports.ledger.refused_contention, clock.now_s - began, job.status, 0

    refusals, waited_s, status, _ = simulated(main)
    assert status is JobStatus.QUEUED  # nothing of the refused call was applied
    assert refusals >= TRANSACTION_ROUNDS * 2  # the library's 2 attempts, each round
    assert 1.0 < waited_s < 20.0  # the rounds' pauses, on the simulated clock


async def hogging(ledger: DocumentLedger, clock: VirtualClock, path: str) -> None:
    """Another writer that takes each of the document's tokens the moment it comes back."""
    while True:
        with contextlib.suppress(gexc.Aborted):
            ledger.commit([path], clock.now_s)
        await asyncio.sleep(0.001)


def test_a_transaction_that_waits_out_its_rounds_goes_through_once_a_token_is_back() -> None:
    async def main(clock: VirtualClock) -> JobStatus:
        ports = ports_with(clock, burst=1.0)
        await ports.store.create_job(job_record("j1"), [])
        await clock_sleep(1.0)
        ports.ledger.commit(["jobs/j1"], clock.now_s)
        await clock_sleep(0.9)
        await ports.store.set_job_status("j1", JobStatus.RUNNING, clock.utc())
        job = await ports.twins.store.get_job("j1")
        assert job is not None
        return job.status

    assert simulated(main) is JobStatus.RUNNING


async def clock_sleep(seconds: float) -> None:
    await asyncio.sleep(seconds)


def test_a_blind_write_to_a_busy_document_is_contended_at_once() -> None:
    async def main(clock: VirtualClock) -> int:
        ports = ports_with(clock, burst=1.0)
        ports.ledger.commit(["jobs/j1", "jobs/j2"], clock.now_s)
        with pytest.raises(Contended):
            await ports.store.mark_published(["j1", "j2"], clock.utc())
        return ports.ledger.refused_contention

    assert simulated(main) == 1


def test_a_paced_host_whose_document_is_busy_refuses_and_gives_its_slot_back() -> None:
    async def main(clock: VirtualClock) -> tuple[object, object, object]:
        slow = FirestoreLimits(sustained_writes_per_doc_s=0.1, burst_writes_per_doc=1.0)
        ports = LimitedPorts(DocumentLedger(slow), clock)
        limits = gate.HostLimits(concurrency=2, min_interval_s=2.5)  # one document: the host's
        lease = clock.utc() + timedelta(seconds=30)
        first = await ports.gate.acquire("h.example", limits, lease, clock.utc())
        await clock_sleep(3.0)  # the pace allows the next start; the document has no token yet
        second = await ports.gate.acquire("h.example", limits, lease, clock.utc())
        state = await ports.twins.gate.state("h.example", clock.utc())
        return first, second, state.in_flight

    first, second, in_flight = simulated(main)
    assert isinstance(first, gate.Permit)
    assert isinstance(second, gate.Throttle) and second.reason == "rate"
    assert in_flight == 1  # the refused permit's slot was given back
