"""IdentityMove on the Firestore emulator: what a release before the identity database kept in
the main database (API keys, signed-out sessions) moves to the identity database once; a newer
document there is never overwritten; the originals are gone; after the move, its marker is all
a start reads."""

from __future__ import annotations

import uuid
from collections.abc import AsyncIterator
from datetime import UTC, datetime, timedelta

import pytest
from google.cloud import firestore

from scrapejobs_shared.adapters.firestore.identity_move import IdentityMove

pytestmark = pytest.mark.emulators


@pytest.fixture
async def databases(
    stack: object,
) -> AsyncIterator[tuple[str, firestore.AsyncClient, firestore.AsyncClient]]:
    project = stack.config.project_id
    suffix = uuid.uuid4().hex[:10]
    name = f"main-{suffix}"
    main = firestore.AsyncClient(project=project, database=name)
    identities = firestore.AsyncClient(project=project, database=f"identities-{suffix}")
    yield name, main, identities
    main.close()
    identities.close()


async def docs(client: firestore.AsyncClient, collection: str) -> dict[str, dict[str, object]]:
    return {s.id: s.to_dict() or {} async for s in client.collection(collection).stream()}


async def test_keys_and_sessions_move_once_and_newer_copies_win(
    databases: tuple[str, firestore.AsyncClient, firestore.AsyncClient],
) -> None:
    name, main, identities = databases
    created = datetime(2026, 11, 1, tzinfo=UTC)
    expires = datetime.now(UTC) + timedelta(hours=1)
    await (
        main.collection("api_keys")
        .document("d1")
        .set({"id": "key_1", "tenant": "a", "created_at": created})
    )
    await (
        main.collection("api_keys")
        .document("d2")
        .set({"id": "key_2", "tenant": "b", "role": "member"})
    )
    await main.collection("revoked_sessions").document("s1").set({"expire_at": expires})
    await main.collection("jobs").document("j1").set({"status": "running"})
    # d2 changed in the identity database meanwhile (another instance moved it, then it was renamed)
    await (
        identities.collection("api_keys")
        .document("d2")
        .set({"id": "key_2", "tenant": "b", "role": "admin"})
    )

    assert await IdentityMove(main, identities).run(name) == 3

    keys = await docs(identities, "api_keys")
    assert keys["d1"] == {"id": "key_1", "tenant": "a", "created_at": created}
    assert keys["d2"]["role"] == "admin"  # the newer copy kept
    assert (await docs(identities, "revoked_sessions"))["s1"] == {"expire_at": expires}
    assert await docs(main, "api_keys") == {} and await docs(main, "revoked_sessions") == {}
    assert await docs(main, "jobs") == {"j1": {"status": "running"}}  # nothing else moves
    assert await docs(identities, "jobs") == {}

    # moved once: a document written to the main database afterwards stays where it is
    await main.collection("api_keys").document("d3").set({"id": "key_3"})
    assert await IdentityMove(main, identities).run(name) == 0
    assert "d3" in await docs(main, "api_keys") and "d3" not in await docs(identities, "api_keys")


async def test_a_main_database_without_identities_moves_nothing_and_is_marked(
    databases: tuple[str, firestore.AsyncClient, firestore.AsyncClient],
) -> None:
    name, main, identities = databases
    assert await IdentityMove(main, identities).run(name) == 0
    assert len(await docs(identities, "identity_moves")) == 1
