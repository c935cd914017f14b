"""In-memory TenantQuotas (unit tests; the contract suite runs it beside Firestore's)."""

from __future__ import annotations

from scrapejobs_shared.ports.tenant_quotas import Quota


class MemoryTenantQuotas:
    def __init__(self) -> None:
        self.set: dict[str, Quota] = {}

    async def quota_of(self, tenant: str) -> Quota | None:
        return self.set.get(tenant)

    async def set_quota(self, tenant: str, quota: Quota) -> None:
        self.set[tenant] = quota

    async def quotas(self, limit: int) -> list[tuple[str, Quota]]:
        return sorted(self.set.items())[:limit]
