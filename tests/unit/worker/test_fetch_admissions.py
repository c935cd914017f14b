"""The worker's own rules before a host's permit (fetch_admissions.py): a tenant at its cap on
pages in flight is deferred at once (its slot frees when a page ends, not at a time), others are
not; a job without a pace of its own takes no permit of it; the worker lists both, tenant first."""

from __future__ import annotations

from datetime import timedelta

from scrapejobs_shared.adapters.memory.host_gate import MemoryHostGate
from scrapejobs_shared.adapters.memory.job_store import MemoryJobStore
from scrapejobs_shared.politeness.admission import HeldPermit, Politeness, PolitenessPolicy
from scrapejobs_shared.politeness.host_gate import HostLimits, Throttle
from scrapejobs_shared.politeness.robots_cache import RobotsCache
from scrapejobs_worker.tasks.fetch_admissions import JobPace, TenantSlot, fetch_admissions
from scrapejobs_worker.tasks.tenant_caps import TenantCaps
from support.worker_fakes import NOW, ScriptedFetcher, setup_job

HOST = "http~a.example~80"
LIMITS = HostLimits(concurrency=4, min_interval_s=0.0)
LEASE = timedelta(seconds=10)


def _politeness() -> Politeness:
    fetcher = ScriptedFetcher(200)
    return Politeness(
        MemoryHostGate(), RobotsCache(fetcher), PolitenessPolicy(max_wait_s=0.0), lambda: NOW
    )


async def test_a_tenant_at_its_cap_is_deferred_at_once_and_others_are_not() -> None:
    store = MemoryJobStore()
    acme = await setup_job(store, tenant="acme", job_id="a")
    other = await setup_job(store, tenant="other", job_id="o")
    slot = TenantSlot(TenantCaps(None, 1), _politeness(), LEASE)
    spec = store.jobs["a"].spec

    first = await slot.admit(acme, spec, HOST, LIMITS, 0.0)
    assert isinstance(first, HeldPermit)
    second = await slot.admit(acme, spec, HOST, LIMITS, 0.0)
    assert isinstance(second, Throttle) and second.wait_s == 0.0
    assert isinstance(await slot.admit(other, spec, HOST, LIMITS, 0.0), HeldPermit)
    await first.release()
    assert isinstance(await slot.admit(acme, spec, HOST, LIMITS, 0.0), HeldPermit)


async def test_without_a_cap_or_a_pace_of_its_own_no_permit_is_taken() -> None:
    store = MemoryJobStore()
    batch = await setup_job(store)
    spec = store.jobs["j"].spec
    politeness = _politeness()
    assert (
        await TenantSlot(TenantCaps(None, 0), politeness, LEASE).admit(
            batch, spec, HOST, LIMITS, 0.0
        )
        is None
    )
    assert await JobPace(politeness, LEASE).admit(batch, spec, HOST, LIMITS, 0.0) is None
    rules = fetch_admissions(TenantCaps(None, 0), politeness, LEASE)
    assert [type(rule) for rule in rules] == [TenantSlot, JobPace]
