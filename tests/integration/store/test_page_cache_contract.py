"""The PageCache contract on the memory twin and the Firestore emulator."""

from __future__ import annotations

import uuid
from collections.abc import AsyncIterator
from datetime import UTC, datetime, timedelta

import pytest
from google.cloud import firestore

from scrapejobs_shared.adapters.firestore.page_cache import FirestorePageCache
from scrapejobs_shared.adapters.memory.page_cache import MemoryPageCache
from scrapejobs_shared.domain.jobspec import JobSpec
from scrapejobs_shared.ports.page_cache import KeptPage, PageCache, page_key


@pytest.fixture(params=["memory", pytest.param("firestore", marks=pytest.mark.emulators)])
async def cache(request: pytest.FixtureRequest) -> AsyncIterator[PageCache]:
    if request.param == "memory":
        yield MemoryPageCache()
        return
    stack = request.getfixturevalue("stack")
    client = firestore.AsyncClient(project=stack.config.project_id)
    yield FirestorePageCache(client)
    client.close()


async def test_an_entry_is_found_while_its_page_is_young_enough(cache: PageCache) -> None:
    spec = JobSpec()
    key, other = (page_key(f"https://a.example/{uuid.uuid4()}", spec) for _ in "ab")
    now = datetime.now(UTC).replace(microsecond=0)
    page = KeptPage("job-1", "task-1", now - timedelta(minutes=5))
    assert await cache.get_many([key, other], now - timedelta(hours=1)) == {}
    await cache.put_many({key: page}, now + timedelta(days=2))
    assert await cache.get_many([key, other, key], now - timedelta(hours=1)) == {key: page}
    assert await cache.get_many([key], now - timedelta(minutes=1)) == {}  # fetched too long ago
    assert await cache.get_many([], now) == {}
    newer = KeptPage("job-2", "task-9", now)
    await cache.put_many({key: newer}, now + timedelta(days=2))  # a later fetch replaces it
    assert await cache.get_many([key], now - timedelta(hours=1)) == {key: newer}


async def test_many_entries_are_kept_at_once(cache: PageCache) -> None:
    now = datetime.now(UTC).replace(microsecond=0)
    pages = {
        page_key(f"https://a.example/{uuid.uuid4()}", JobSpec()): KeptPage("j", f"t{i}", now)
        for i in range(600)  # more than one commit holds
    }
    await cache.put_many(pages, now + timedelta(days=2))
    assert await cache.get_many(list(pages), now - timedelta(seconds=1)) == pages


def test_the_key_is_decided_by_the_url_and_what_shapes_the_result() -> None:
    base = JobSpec.model_validate({"options": {"formats": ["markdown"]}})
    url = "https://a.example/p"
    same = JobSpec.model_validate(
        {"options": {"formats": ["markdown"], "timeout_s": 5, "cache_max_age_s": 60}}
    )
    assert page_key(url, base) == page_key(url, same)  # how long to wait or reuse: not shaping
    others = {
        page_key("https://a.example/q", base),
        page_key(url, JobSpec.model_validate({"options": {"formats": ["html"]}})),
        page_key(
            url,
            JobSpec.model_validate(
                {"extract": {"h": {"css": "h1"}}, "options": {"formats": ["markdown"]}}
            ),
        ),
        page_key(
            url,
            JobSpec.model_validate({"options": {"formats": ["markdown"], "headers": {"X-A": "1"}}}),
        ),
        page_key(
            url, JobSpec.model_validate({"options": {"formats": ["markdown"], "render": True}})
        ),
    }
    assert page_key(url, base) not in others and len(others) == 5
