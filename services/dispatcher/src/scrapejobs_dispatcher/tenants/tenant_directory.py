"""The tenants an admin sees together (the dashboard's Tenants page): the default tenant and
every one with a quota or a proxy pool of its own, each with its day's usage against its quota
and the proxies its jobs go through (its own pool, else the deployment's), by label."""

from __future__ import annotations

from dataclasses import dataclass

from scrapejobs_dispatcher.tenants.tenant_quotas import Quotas, TenantUsage
from scrapejobs_shared.domain.tenancy import DEFAULT_TENANT
from scrapejobs_shared.options.proxy_pools import ProxyPool
from scrapejobs_shared.tenant_pools import ProxyPools

SHOWN = 100  # tenants listed at most (each costs a few reads)


@dataclass(frozen=True, slots=True)
class TenantEntry:
    usage: TenantUsage
    pool: ProxyPool  # what its jobs go through
    own_pool: bool  # its own (else the deployment's)


@dataclass(eq=False)
class TenantDirectory:
    quotas: Quotas
    pools: ProxyPools

    async def entries(self, limit: int = SHOWN) -> list[TenantEntry]:
        """The default tenant and those with a quota or a pool of their own, by name."""
        own_pools = dict(await self.pools.own_pools(limit))
        named = {t for t, _ in await self.quotas.own_quotas()} | set(own_pools)
        tenants = sorted(named | {DEFAULT_TENANT})[:limit]
        entries = []
        for tenant in tenants:
            own = own_pools.get(tenant)
            pool = self.pools.deployment if own is None else own
            usage = await self.quotas.usage(tenant)
            entries.append(TenantEntry(usage, pool, own is not None))
        return entries
