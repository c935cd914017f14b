"""A tenant's pages in flight at once, across every worker: its quota's ``pages_in_flight``
(``PUT /v1/tenants/{t}``, else the deployment's default), held as the slots of a gate key of
its own on the shared host gate, so the same slots, leases and warm reuse that keep a host's
concurrency across instances keep a tenant's. A cap of 0 takes no slot (no store operation)."""

from __future__ import annotations

import logging
import time
from dataclasses import dataclass, field

from scrapejobs_shared.ports.tenant_quotas import TenantQuotas

log = logging.getLogger(__name__)
RECHECK_S = 5.0
TENANT_GATE_PREFIX = "tenant~"  # never a host key (those begin with a scheme)


def tenant_gate_key(tenant: str) -> str:
    return TENANT_GATE_PREFIX + tenant


@dataclass(eq=False)
class TenantCaps:
    quotas: TenantQuotas | None
    default: int
    recheck_s: float = RECHECK_S
    _known: dict[str, tuple[int, float]] = field(init=False, default_factory=dict)

    async def cap_of(self, tenant: str) -> int:
        """Pages ``tenant`` may have fetched at once (0: no cap), read at most every
        ``recheck_s`` per process."""
        if self.quotas is None:
            return self.default
        known = self._known.get(tenant)
        if known is not None and known[1] > time.monotonic():
            return known[0]
        quota = await self.quotas.quota_of(tenant)
        cap = self.default if quota is None else quota.pages_in_flight
        if len(self._known) > 10_000:
            self._known.clear()
        self._known[tenant] = (cap, time.monotonic() + self.recheck_s)
        return cap
