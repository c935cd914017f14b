"""The ApiKeyStore contract on the memory twin and the Firestore emulator."""

from __future__ import annotations

import uuid
from collections.abc import AsyncIterator
from datetime import UTC, datetime, timedelta

import pytest
from google.cloud import firestore

from scrapejobs_shared.adapters.firestore.api_keys import FirestoreApiKeyStore
from scrapejobs_shared.adapters.memory.api_keys import MemoryApiKeyStore
from scrapejobs_shared.domain.tenancy import Role
from scrapejobs_shared.ports.api_keys import ApiKeyRecord, ApiKeyStore


@pytest.fixture(params=["memory", pytest.param("firestore", marks=pytest.mark.emulators)])
async def keys(request: pytest.FixtureRequest) -> AsyncIterator[ApiKeyStore]:
    if request.param == "memory":
        yield MemoryApiKeyStore()
        return
    stack = request.getfixturevalue("stack")
    client = firestore.AsyncClient(project=stack.config.project_id)
    yield FirestoreApiKeyStore(client)
    client.close()


def record(tenant: str, role: Role, created_at: datetime) -> ApiKeyRecord:
    return ApiKeyRecord(
        id=f"key_{uuid.uuid4().hex[:16]}",
        digest=uuid.uuid4().hex * 2,
        tenant=tenant,
        role=role,
        name=f"{tenant} {role}",
        created_at=created_at,
    )


async def test_a_key_is_found_by_digest_and_id_listed_by_tenant_and_revoked(
    keys: ApiKeyStore,
) -> None:
    tenant, other = f"t-{uuid.uuid4().hex[:8]}", f"u-{uuid.uuid4().hex[:8]}"
    now = datetime.now(UTC).replace(microsecond=0)
    first = record(tenant, Role.MEMBER, now)
    second = record(tenant, Role.ADMIN, now + timedelta(seconds=1))
    elsewhere = record(other, Role.SCHEDULER, now)
    for made in (first, second, elsewhere):
        await keys.add(made)
    assert await keys.by_digest(first.digest) == first
    assert await keys.by_id(second.id) == second
    assert await keys.by_digest("0" * 64) is None and await keys.by_id("key_none") is None
    assert [k.id for k in await keys.listed(tenant, 10)] == [second.id, first.id]  # newest first
    assert [k.id for k in await keys.listed(tenant, 1)] == [second.id]
    assert elsewhere.id in {k.id for k in await keys.listed(None, 1000)}
    used_at = now + timedelta(minutes=5)
    await keys.used(first.digest, used_at)
    found = await keys.by_digest(first.digest)
    assert found is not None and found.last_used_at == used_at
    assert await keys.remove(first.id)
    assert await keys.by_digest(first.digest) is None and await keys.by_id(first.id) is None
    assert not await keys.remove(first.id)  # twice: nothing left to revoke
    await keys.used(first.digest, used_at)  # a use noted after the revocation writes nothing
    assert await keys.by_digest(first.digest) is None
    assert [k.id for k in await keys.listed(tenant, 10)] == [second.id]
