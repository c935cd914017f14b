"""In-memory TenantProxies (unit tests; the contract suite runs it beside Firestore's)."""

from __future__ import annotations

from dataclasses import replace

from scrapejobs_shared.options.proxy_pools import ProxyPool


class MemoryTenantProxies:
    def __init__(self) -> None:
        self.kept: dict[str, ProxyPool] = {}
        self.reads = 0

    async def pool_of(self, tenant: str) -> ProxyPool | None:
        self.reads += 1
        return self.kept.get(tenant)

    async def set_pool(self, tenant: str, pool: ProxyPool) -> None:
        self.kept[tenant] = replace(pool, owner=tenant)

    async def remove_pool(self, tenant: str) -> bool:
        return self.kept.pop(tenant, None) is not None

    async def pools(self, limit: int) -> list[tuple[str, ProxyPool]]:
        return sorted(self.kept.items())[:limit]
