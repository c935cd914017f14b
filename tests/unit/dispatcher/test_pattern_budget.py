"""A job's regular expressions are bounded at submission: how many it holds, and what each
costs to compile (within its memory budget, off the event loop); past either a 422 naming the
field, also for a monitor's definition. Validation itself never compiles."""

from __future__ import annotations

import asyncio
import threading
import time
from typing import Any

import pytest

from scrapejobs_dispatcher.settings import DispatcherSettings
from scrapejobs_shared.adapters.memory.job_store import MemoryJobStore
from support.memory_dispatcher import memory_client

COSTLY = r"\pL{400}"  # ~0.3 s of one core and ~10 MB under RE2's default budget
URL = "https://shop.example/p/1"


def field(pattern: str) -> dict[str, Any]:
    return {"css": "p::text", "re": pattern}


@pytest.mark.parametrize(
    ("body", "where"),
    [
        ({"url": URL, "extract": {"name": field(COSTLY)}}, "extract.name.re"),
        (
            {"url": URL, "extract": {"rows": {"css": "tr", "items": {"c": field(COSTLY)}}}},
            "extract.rows.items.c.re",
        ),
        ({"crawl": {"start_url": URL, "exclude": ["/ok", COSTLY]}}, "crawl.exclude[1]"),
    ],
)
async def test_a_pattern_over_its_compile_budget_is_a_422_naming_its_field(
    body: dict[str, Any], where: str
) -> None:
    store = MemoryJobStore()
    async with memory_client(store) as api:
        refused = await api.post("/v1/jobs", json=body)
        assert refused.status_code == 422, refused.text
        assert refused.json()["error"]["field"] == where
        assert "KiB of memory" in refused.json()["error"]["message"]
        scraped = await api.post("/v1/scrape", json={"url": URL, "extract": {"x": field(COSTLY)}})
        assert scraped.status_code == 422 and scraped.json()["error"]["field"] == "extract.x.re"
    assert store.jobs == {}  # nothing stored


async def test_a_job_holds_at_most_its_patterns() -> None:
    settings = DispatcherSettings(auth_mode="none", max_patterns_per_job=3)
    async with memory_client(MemoryJobStore(), settings) as api:
        fields = {f"f{n}": field(f"x{n}+") for n in range(4)}
        refused = await api.post("/v1/jobs", json={"url": URL, "extract": fields})
        assert refused.status_code == 422 and refused.json()["error"]["field"] == "extract.f3.re"
        assert "at most 3 regular expressions" in refused.json()["error"]["message"]
        del fields["f3"]
        assert (await api.post("/v1/jobs", json={"url": URL, "extract": fields})).is_success


async def test_a_monitor_with_a_costly_pattern_is_refused() -> None:
    body = {
        "urls": [URL],
        "extract": {"price": field(COSTLY)},
        "name": "prices",
        "schedule": {"text": "hourly"},
    }
    async with memory_client(MemoryJobStore()) as api:
        refused = await api.post("/v1/monitors", json=body)
        assert refused.status_code == 422 and refused.json()["error"]["field"] == "extract.price.re"


async def test_patterns_compile_off_the_event_loop_one_at_a_time(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Four submissions of twelve patterns each, at once: every compile runs in the one
    pattern thread, never on the event loop's, and never two at once."""
    from scrapejobs_dispatcher.rules import pattern_budget

    threads: set[str] = set()
    running = 0
    most = 0
    real = pattern_budget.compile_within_budget

    def recorded(pattern: str) -> object:
        nonlocal running, most
        running += 1
        most = max(most, running)
        threads.add(threading.current_thread().name)
        try:
            time.sleep(0.002)
            return real(pattern)
        finally:
            running -= 1

    monkeypatch.setattr(pattern_budget, "compile_within_budget", recorded)
    heavy = r"[\p{L}\p{N}]{20}"  # accepted: near the 512 KiB budget
    fields = {f"f{n}": field(heavy + "x" * n) for n in range(12)}
    async with memory_client(MemoryJobStore()) as api:
        answers = await asyncio.gather(
            *(api.post("/v1/jobs", json={"url": URL, "extract": fields}) for _ in range(4))
        )
    assert all(a.is_success for a in answers), answers[0].text
    assert len(threads) == 1 and threading.main_thread().name not in threads
    assert most == 1


async def test_tenants_take_turns_at_the_compile_thread(monkeypatch: pytest.MonkeyPatch) -> None:
    """Tenant A queues 30 patterns; tenant B's one pattern, asked after, is compiled second,
    not thirty-first."""
    from concurrent.futures import ThreadPoolExecutor

    from scrapejobs_dispatcher.rules import pattern_budget

    order: list[str] = []

    def recorded(pattern: str) -> None:
        time.sleep(0.002)
        order.append(pattern)

    monkeypatch.setattr(pattern_budget, "_compiles", recorded)
    with ThreadPoolExecutor(1) as thread:
        turns = pattern_budget.CompileTurns(thread)
        theirs = [asyncio.ensure_future(turns.compile("team-a", f"a{n}")) for n in range(30)]
        await asyncio.sleep(0)  # team-a's queue is in place
        await turns.compile("team-b", "b0")
        assert order.index("b0") <= 2, order
        await asyncio.gather(*theirs)
    assert len(order) == 31
