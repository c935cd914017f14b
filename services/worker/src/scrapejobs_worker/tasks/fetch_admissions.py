"""The worker's own rules a page passes before its host's permit, in the order
:func:`fetch_admissions` lists them: each holds a permit for the fetch (released with the host's
when the fetch ends), defers the page (a ``Throttle``), or does not apply to it (None). A new
rule is a class with ``reason`` and ``admit`` and one line in :func:`fetch_admissions`."""

from __future__ import annotations

from dataclasses import replace
from datetime import timedelta
from typing import Protocol

from scrapejobs_shared.domain.jobspec import JobSpec
from scrapejobs_shared.domain.records import BatchRecord
from scrapejobs_shared.options import JOB_PACE
from scrapejobs_shared.politeness.admission import HeldPermit, Politeness
from scrapejobs_shared.politeness.host_gate import HostLimits, Throttle
from scrapejobs_shared.politeness.job_pace import job_pace, job_pace_key
from scrapejobs_worker.tasks.tenant_caps import TenantCaps, tenant_gate_key


class FetchAdmission(Protocol):
    reason: str  # what a page it defers waits for, in the task's log

    async def admit(
        self, batch: BatchRecord, spec: JobSpec, host: str, limits: HostLimits, wait_s: float
    ) -> HeldPermit | Throttle | None:
        """A permit for a page of ``batch`` toward ``host`` (whose own ``limits`` apply),
        waiting at most ``wait_s``."""
        ...


class TenantSlot:
    """A slot of the batch's tenant when it has a cap on pages in flight (tenant_caps.py)."""

    reason = "tenant at its pages in flight"

    def __init__(self, caps: TenantCaps, politeness: Politeness, lease: timedelta) -> None:
        self._caps = caps
        self._politeness = politeness
        self._lease = lease

    async def admit(
        self, batch: BatchRecord, spec: JobSpec, host: str, limits: HostLimits, wait_s: float
    ) -> HeldPermit | Throttle | None:
        cap = await self._caps.cap_of(batch.tenant)
        if not cap:
            return None
        key, own = tenant_gate_key(batch.tenant), HostLimits(concurrency=cap)
        got = await self._politeness.admit(key, own, self._lease, max_wait_s=wait_s)
        # a slot frees when one of the tenant's pages ends, not at a time known now
        return replace(got, wait_s=0.0) if isinstance(got, Throttle) else got


class JobPace:
    """A permit of the job's own pace toward ``host`` when it asks for a slower one than the
    host's: kept on a gate key of the job's, so that it paces only its own pages
    (politeness/job_pace.py)."""

    reason = "job at its own pace"

    def __init__(self, politeness: Politeness, lease: timedelta) -> None:
        self._politeness = politeness
        self._lease = lease

    async def admit(
        self, batch: BatchRecord, spec: JobSpec, host: str, limits: HostLimits, wait_s: float
    ) -> HeldPermit | Throttle | None:
        paced = job_pace(JOB_PACE.of(spec.options).rps, limits)
        if paced is None:
            return None
        key = job_pace_key(batch.job_id, host)
        return await self._politeness.admit(key, paced, self._lease, max_wait_s=wait_s)


def fetch_admissions(
    caps: TenantCaps, politeness: Politeness, lease: timedelta
) -> list[FetchAdmission]:
    """The worker's own rules, in the order a page passes them."""
    return [TenantSlot(caps, politeness, lease), JobPace(politeness, lease)]
