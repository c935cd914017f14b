"""The AnswerCache contract on the memory twin and the Firestore emulator."""

from __future__ import annotations

import uuid
from collections.abc import AsyncIterator
from datetime import UTC, datetime, timedelta

import pytest
from google.cloud import firestore

from scrapejobs_shared.adapters.firestore.answer_cache import FirestoreAnswerCache
from scrapejobs_shared.adapters.memory.answer_cache import MemoryAnswerCache
from scrapejobs_shared.ports.answer_cache import AnswerCache, CachedAnswer, answer_key


@pytest.fixture(params=["memory", pytest.param("firestore", marks=pytest.mark.emulators)])
async def cache(request: pytest.FixtureRequest) -> AsyncIterator[AnswerCache]:
    if request.param == "memory":
        yield MemoryAnswerCache()
        return
    stack = request.getfixturevalue("stack")
    client = firestore.AsyncClient(project=stack.config.project_id)
    yield FirestoreAnswerCache(client)
    client.close()


async def test_an_answer_is_kept_until_it_expires(cache: AnswerCache) -> None:
    key, other = (answer_key(f"page {uuid.uuid4()}", "price?", {}, "m") for _ in "ab")
    now = datetime.now(UTC)
    assert await cache.get_many([key, other], now) == {}
    answer = CachedAnswer({"price": 1.5, "": "an empty key", "nested": [[1]]}, "m-001")
    await cache.put(key, answer, now + timedelta(hours=24))
    assert await cache.get_many([key, other, key], now) == {key: answer}
    assert await cache.get_many([key], now + timedelta(hours=25)) == {}
    assert await cache.get_many([], now) == {}


def test_the_key_is_decided_by_content_prompt_schema_and_model() -> None:
    base = answer_key("c", "p", {"type": "object", "a": 1}, "m")
    assert base == answer_key("c", "p", {"a": 1, "type": "object"}, "m")  # key order aside
    others = {
        answer_key("c2", "p", {"type": "object", "a": 1}, "m"),
        answer_key("c", "p2", {"type": "object", "a": 1}, "m"),
        answer_key("c", "p", {"type": "object", "a": 2}, "m"),
        answer_key("c", "p", {"type": "object", "a": 1}, "m2"),
    }
    assert base not in others and len(others) == 4
