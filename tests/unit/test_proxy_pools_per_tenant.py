"""Whose proxies a job goes through (shared tenant_pools.py): a tenant's own pool, read at most
every recheck per process (the instance that changed it sees the change at once), else the
deployment's; without a store of tenants' pools, the deployment's for all and none can be
set."""

from __future__ import annotations

import pytest

from scrapejobs_shared.adapters.memory.tenant_proxies import MemoryTenantProxies
from scrapejobs_shared.options.proxy_pools import parse_pool
from scrapejobs_shared.tenant_pools import ProxyPools, TenantPoolsOff

DEPLOYMENT = parse_pool('["http://deploy.example:1"]')
OWN = parse_pool('[{"url": "http://acme.example:1", "country": "FR"}]')


async def test_a_tenants_pool_is_read_once_per_recheck_and_changed_at_once_here() -> None:
    store, now = MemoryTenantProxies(), [0.0]
    pools = ProxyPools(DEPLOYMENT, store, recheck_s=5, clock=lambda: now[0])
    elsewhere = ProxyPools(DEPLOYMENT, store, recheck_s=5, clock=lambda: now[0])
    assert await elsewhere.pool_of("acme") == DEPLOYMENT
    await pools.set_pool("acme", OWN)
    assert await pools.pool_of("acme") == OWN and (await pools.pool_of("acme")).owner == "acme"
    assert await elsewhere.pool_of("acme") == DEPLOYMENT  # within its recheck
    reads = store.reads
    for _ in range(10):
        await elsewhere.pool_of("acme")
    assert store.reads == reads
    now[0] = 5.1
    assert await elsewhere.pool_of("acme") == OWN
    assert await elsewhere.pool_of("other") == DEPLOYMENT and await pools.pool_of(None) == (
        DEPLOYMENT
    )
    assert await pools.remove_pool("acme") and await pools.pool_of("acme") == DEPLOYMENT
    assert [t for t, _ in await pools.own_pools(10)] == []


async def test_without_tenants_pools_every_job_has_the_deployments() -> None:
    pools = ProxyPools(DEPLOYMENT)
    assert await pools.pool_of("acme") == DEPLOYMENT and await pools.own_pools(10) == []
    with pytest.raises(TenantPoolsOff, match="SCRAPEJOBS_TENANT_PROXIES"):
        await pools.set_pool("acme", OWN)
