"""The SessionRevocations contract on the memory twin and the Firestore emulator."""

from __future__ import annotations

import uuid
from collections.abc import AsyncIterator
from datetime import UTC, datetime, timedelta

import pytest
from google.cloud import firestore

from scrapejobs_shared.adapters.firestore.session_revocations import FirestoreSessionRevocations
from scrapejobs_shared.adapters.memory.session_revocations import MemorySessionRevocations
from scrapejobs_shared.ports.session_revocations import SessionRevocations


@pytest.fixture(params=["memory", pytest.param("firestore", marks=pytest.mark.emulators)])
async def revocations(request: pytest.FixtureRequest) -> AsyncIterator[SessionRevocations]:
    if request.param == "memory":
        yield MemorySessionRevocations()
        return
    stack = request.getfixturevalue("stack")
    client = firestore.AsyncClient(project=stack.config.project_id)
    yield FirestoreSessionRevocations(client)
    client.close()


async def test_a_revoked_session_stays_revoked_until_it_would_have_expired(
    revocations: SessionRevocations,
) -> None:
    ended, other = uuid.uuid4().hex, uuid.uuid4().hex
    now = datetime.now(UTC)
    assert not await revocations.revoked(ended, now)
    await revocations.revoke(ended, now + timedelta(hours=1))
    assert await revocations.revoked(ended, now)
    assert not await revocations.revoked(other, now)
    assert not await revocations.revoked(ended, now + timedelta(hours=2))  # lapsed with it
    await revocations.revoke(ended, now + timedelta(hours=1))  # twice: still one record
    assert await revocations.revoked(ended, now)
