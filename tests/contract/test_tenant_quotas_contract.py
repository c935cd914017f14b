"""The TenantQuotas contract on the memory twin and the Firestore emulator."""

from __future__ import annotations

import uuid
from collections.abc import AsyncIterator

import pytest
from google.cloud import firestore

from scrapejobs_shared.adapters.firestore.tenant_quotas import FirestoreTenantQuotas
from scrapejobs_shared.adapters.memory.tenant_quotas import MemoryTenantQuotas
from scrapejobs_shared.ports.tenant_quotas import Quota, TenantQuotas


@pytest.fixture(params=["memory", pytest.param("firestore", marks=pytest.mark.emulators)])
async def quotas(request: pytest.FixtureRequest) -> AsyncIterator[TenantQuotas]:
    if request.param == "memory":
        yield MemoryTenantQuotas()
        return
    stack = request.getfixturevalue("stack")
    client = firestore.AsyncClient(project=stack.config.project_id)
    yield FirestoreTenantQuotas(client)
    client.close()


async def test_a_quota_set_is_read_back_replaced_and_listed(quotas: TenantQuotas) -> None:
    tenant = f"t-{uuid.uuid4().hex[:8]}"
    assert await quotas.quota_of(tenant) is None
    await quotas.set_quota(tenant, Quota(pages_per_day=100, pages_in_flight=4))
    assert await quotas.quota_of(tenant) == Quota(100, 4)
    await quotas.set_quota(tenant, Quota(pages_per_day=0, pages_in_flight=2))
    assert await quotas.quota_of(tenant) == Quota(0, 2)
    assert (tenant, Quota(0, 2)) in list(await quotas.quotas(1000))
