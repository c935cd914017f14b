"""Whose proxies a job goes through: its tenant's own pool, where an admin gave it one
(``PUT /v1/tenants/{t}/proxies``) and the deployment lets tenants have one
(``SCRAPEJOBS_TENANT_PROXIES``), **instead of** the deployment's (``SCRAPEJOBS_PROXIES``): a
tenant with a pool never spends the deployment's proxies, and no other tenant's job goes
through it. Read at most every ``recheck_s`` per process (a pool set or taken away holds
everywhere within it); the instance that changed it sees the change at once."""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass, field

from scrapejobs_shared.errors import InvalidInput
from scrapejobs_shared.options.proxy_pools import ProxyPool
from scrapejobs_shared.ports.tenant_proxies import TenantProxies

RECHECK_S = 5.0
KNOWN = 10_000  # tenants remembered per process at most


@dataclass(eq=False)
class ProxyPools:
    deployment: ProxyPool
    tenants: TenantProxies | None = None  # None: tenants have no pools of their own here
    recheck_s: float = RECHECK_S
    clock: Callable[[], float] = time.monotonic
    _known: dict[str, tuple[ProxyPool | None, float]] = field(init=False, default_factory=dict)

    @property
    def per_tenant(self) -> bool:
        return self.tenants is not None

    async def pool_of(self, tenant: str | None) -> ProxyPool:
        """The pool ``tenant``'s jobs go through: its own, else the deployment's."""
        own = None if tenant is None else await self.own_pool(tenant)
        return self.deployment if own is None else own

    async def own_pool(self, tenant: str, fresh: bool = False) -> ProxyPool | None:
        """The tenant's own pool (None: it has none); ``fresh``: read now, not remembered."""
        if self.tenants is None:
            return None
        known = self._known.get(tenant)
        if not fresh and known is not None and known[1] > self.clock():
            return known[0]
        own = await self.tenants.pool_of(tenant)
        self._remember(tenant, own)
        return own

    async def own_pools(self, limit: int) -> list[tuple[str, ProxyPool]]:
        """Tenants with a pool of their own, by name (at most ``limit``)."""
        return [] if self.tenants is None else list(await self.tenants.pools(limit))

    async def set_pool(self, tenant: str, pool: ProxyPool) -> None:
        await self._store().set_pool(tenant, pool)
        self._remember(tenant, ProxyPool(pool.servers, tenant))

    async def remove_pool(self, tenant: str) -> bool:
        removed = await self._store().remove_pool(tenant)
        self._remember(tenant, None)
        return removed

    def _store(self) -> TenantProxies:
        if self.tenants is None:
            raise TenantPoolsOff()
        return self.tenants

    def _remember(self, tenant: str, own: ProxyPool | None) -> None:
        if len(self._known) >= KNOWN:
            self._known.clear()
        self._known[tenant] = (own, self.clock() + self.recheck_s)


class TenantPoolsOff(InvalidInput):
    """A tenant's pool given or taken where tenants have none (SCRAPEJOBS_TENANT_PROXIES off):
    a 422."""

    def __init__(self) -> None:
        super().__init__(
            "tenants have no proxy pools of their own here (SCRAPEJOBS_TENANT_PROXIES)",
            "proxies",
        )
