"""Proxy pools per tenant: the proxies an admin gave a tenant (``PUT /v1/tenants/{t}/proxies``),
which its jobs go through instead of the deployment's (shared tenant_pools.py). A pool is kept
with its credentials; nothing that reads it back answers or logs more than a proxy's label."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Protocol

from scrapejobs_shared.options.proxy_pools import ProxyPool


class TenantProxies(Protocol):
    async def pool_of(self, tenant: str) -> ProxyPool | None:
        """The tenant's own pool (None: it has none; the deployment's serves it)."""

    async def set_pool(self, tenant: str, pool: ProxyPool) -> None:
        """Give the tenant ``pool`` (replacing any it had)."""

    async def remove_pool(self, tenant: str) -> bool:
        """Take the tenant's pool away (False: it had none)."""

    async def pools(self, limit: int) -> Sequence[tuple[str, ProxyPool]]:
        """Tenants with a pool of their own, by name (at most ``limit``)."""
