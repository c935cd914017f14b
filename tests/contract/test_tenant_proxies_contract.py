"""The TenantProxies contract on the memory twin and the Firestore emulator: a pool is kept with
its credentials (the workers need them), read back equal, listed, replaced and taken away."""

from __future__ import annotations

import json
import uuid
from collections.abc import AsyncIterator

import pytest
from google.cloud import firestore

from scrapejobs_shared.adapters.firestore.tenant_proxies import FirestoreTenantProxies
from scrapejobs_shared.adapters.memory.tenant_proxies import MemoryTenantProxies
from scrapejobs_shared.options.proxy_pools import parse_pool
from scrapejobs_shared.ports.tenant_proxies import TenantProxies

POOL = parse_pool(
    json.dumps(
        [
            {"url": "http://us%40er:p%40ss%3Aw%2Frd@proxy-fr.example:8080", "country": "FR"},
            {"url": "socks5://[2001:db8::5]:1080", "tier": "stealth"},
            {"url": "https://only-user@proxy.example"},
        ]
    )
)


@pytest.fixture(params=["memory", pytest.param("firestore", marks=pytest.mark.emulators)])
async def pools(request: pytest.FixtureRequest) -> AsyncIterator[TenantProxies]:
    if request.param == "memory":
        yield MemoryTenantProxies()
        return
    stack = request.getfixturevalue("stack")
    client = firestore.AsyncClient(project=stack.config.project_id)
    yield FirestoreTenantProxies(client)
    client.close()


async def test_a_pool_is_kept_with_its_credentials_listed_replaced_and_taken_away(
    pools: TenantProxies,
) -> None:
    tenant = f"t-{uuid.uuid4().hex[:8]}"
    assert await pools.pool_of(tenant) is None
    await pools.set_pool(tenant, POOL)
    kept = await pools.pool_of(tenant)
    assert kept == POOL and kept is not None and kept.owner == tenant
    first = kept.servers[0]
    assert (first.username, first.password) == ("us@er", "p@ss:w/rd")
    assert (kept.servers[2].username, kept.servers[2].password) == ("only-user", None)
    assert (tenant, POOL) in list(await pools.pools(1000))
    await pools.set_pool(tenant, parse_pool('["http://other.example:1"]'))
    replaced = await pools.pool_of(tenant)
    assert replaced is not None and [s.label for s in replaced.servers] == [
        "http://other.example:1"
    ]
    assert await pools.remove_pool(tenant) is True
    assert await pools.pool_of(tenant) is None and await pools.remove_pool(tenant) is False
