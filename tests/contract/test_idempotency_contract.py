"""The idempotency-key contract, on the Firestore emulator and the in-memory twin alike."""

from __future__ import annotations

import asyncio
import uuid
from collections.abc import AsyncIterator
from datetime import UTC, datetime, timedelta

import pytest
from google.cloud import firestore

from scrapejobs_shared.adapters.firestore.idempotency import FirestoreIdempotencyKeys
from scrapejobs_shared.adapters.memory.idempotency import MemoryIdempotencyKeys
from scrapejobs_shared.ports.idempotency import (
    Done,
    IdempotencyKeys,
    InFlight,
    Mismatch,
    Reserved,
)

DAY = timedelta(days=1)
STALE = timedelta(minutes=2)


@pytest.fixture(params=["memory", pytest.param("firestore", marks=pytest.mark.emulators)])
async def keys(request: pytest.FixtureRequest) -> AsyncIterator[IdempotencyKeys]:
    if request.param == "memory":
        yield MemoryIdempotencyKeys()
        return
    stack = request.getfixturevalue("stack")
    client = firestore.AsyncClient(project=stack.config.project_id)
    yield FirestoreIdempotencyKeys(client)
    client.close()


async def test_one_of_many_concurrent_reservations_wins(keys) -> None:
    key, now = uuid.uuid4().hex, datetime.now(UTC)
    results = await asyncio.gather(
        *(keys.reserve(key, "body", now, now + DAY, STALE) for _ in range(10))
    )
    assert sum(isinstance(r, Reserved) for r in results) == 1
    assert all(isinstance(r, Reserved | InFlight) for r in results)


async def test_a_completed_key_returns_its_job_and_refuses_another_body(keys) -> None:
    key, now = uuid.uuid4().hex, datetime.now(UTC)
    assert isinstance(await keys.reserve(key, "body", now, now + DAY, STALE), Reserved)
    await keys.complete(key, "job-1", now)
    assert await keys.reserve(key, "body", now, now + DAY, STALE) == Done("job-1")
    assert isinstance(await keys.reserve(key, "other", now, now + DAY, STALE), Mismatch)


async def test_a_released_key_can_be_used_again(keys) -> None:
    key, now = uuid.uuid4().hex, datetime.now(UTC)
    await keys.reserve(key, "body", now, now + DAY, STALE)
    await keys.release(key)
    assert isinstance(await keys.reserve(key, "body", now, now + DAY, STALE), Reserved)


async def test_a_stale_reservation_is_taken_over_and_an_expired_key_is_free(keys) -> None:
    key, now = uuid.uuid4().hex, datetime.now(UTC)
    await keys.reserve(key, "body", now, now + DAY, STALE)
    later = now + STALE + timedelta(seconds=1)
    assert isinstance(await keys.reserve(key, "body", later, later + DAY, STALE), Reserved)
    await keys.complete(key, "job-2", later)
    expired = later + DAY + timedelta(seconds=1)
    assert isinstance(await keys.reserve(key, "new", expired, expired + DAY, STALE), Reserved)
