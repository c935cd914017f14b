"""Firecrawl's changeTracking format: a scrape compared with the previous scrape of its URL by
the same team and tag (new, same, changed with a git diff and its parsed form, the json mode's
fields, removed), the same answer for a scrape answered twice; the format's translation and
what is refused."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from typing import Any

from scrapejobs_dispatcher.firecrawl.format_translation import (
    TRACKED_JSON_FIELD,
    pipeline,
    tracked_field,
)
from scrapejobs_dispatcher.firecrawl.request_models import ScrapeBody
from scrapejobs_dispatcher.monitors.change_tracking import ChangeTracker, tracker_id
from scrapejobs_dispatcher.monitors.page_comparisons import PageComparisons
from scrapejobs_shared.adapters.budgeted_processes import BudgetedProcesses
from scrapejobs_shared.adapters.memory.budgeted_work import InlineWork
from scrapejobs_shared.adapters.memory.job_store import MemoryJobStore
from scrapejobs_shared.adapters.memory.monitor_checks import MemoryMonitorChecks
from scrapejobs_shared.domain.records import TaskRecord
from scrapejobs_shared.domain.statuses import TaskStatus
from scrapejobs_shared.ports.budgeted_work import Budget
from support.loop_ticks import ticking
from support.memory_dispatcher import memory_client

NOW = datetime(2026, 11, 27, 12, tzinfo=UTC)
COMPARISONS = PageComparisons(InlineWork(), Budget("page comparison", "X", 10.0))
URL = "https://shop.example/p/1"


def scraped(job_id: str, markdown: str, status: int = 200, **fields: Any) -> TaskRecord:
    data = {"markdown": markdown, TRACKED_JSON_FIELD: fields}
    return TaskRecord(
        job_id, "t", URL, TaskStatus.SUCCEEDED, NOW, NOW, NOW, http_status=status, data=data
    )


async def test_each_scrape_is_compared_with_the_previous_one_of_its_team_and_tag() -> None:
    moments = iter(NOW + timedelta(minutes=n) for n in range(10))
    tracker = ChangeTracker(MemoryMonitorChecks(), COMPARISONS, lambda: next(moments))
    modes = ["git-diff", "json"]

    first = await tracker.tracked(
        "team-a", None, scraped("j1", "# Shoe\n\n10.50", price=10.5), modes, TRACKED_JSON_FIELD
    )
    assert first == {"previousScrapeAt": None, "visibility": "visible", "changeStatus": "new"}
    same = await tracker.tracked(
        "team-a", None, scraped("j2", "# Shoe\n\n10.50", price=10.5), modes, TRACKED_JSON_FIELD
    )
    assert same["changeStatus"] == "same" and same["previousScrapeAt"] == NOW.isoformat()
    assert "diff" not in same

    changed_page = scraped("j3", "# Shoe\n\n9.99", price=9.99)
    changed = await tracker.tracked("team-a", None, changed_page, modes, TRACKED_JSON_FIELD)
    assert changed["changeStatus"] == "changed"
    assert "-10.50" in changed["diff"]["text"] and "+9.99" in changed["diff"]["text"]
    [file] = changed["diff"]["json"]["files"]
    assert (file["additions"], file["deletions"]) == (1, 1)
    assert {c["type"] for chunk in file["chunks"] for c in chunk["changes"]} >= {"add", "del"}
    assert changed["json"] == {"price": {"previous": 10.5, "current": 9.99}}
    again = await tracker.tracked("team-a", None, changed_page, modes, TRACKED_JSON_FIELD)
    assert again == changed  # the same scrape answered twice: the same comparison

    other_tag = await tracker.tracked("team-a", "nightly", changed_page, modes, None)
    other_team = await tracker.tracked("team-b", None, changed_page, modes, None)
    assert other_tag["changeStatus"] == other_team["changeStatus"] == "new"
    assert tracker_id("team-a", None) != tracker_id("team-a", "nightly")

    gone = await tracker.tracked("team-a", None, scraped("j4", "gone", 404), ["git-diff"], None)
    assert gone["changeStatus"] == "removed"


def body(*formats: Any) -> ScrapeBody:
    return ScrapeBody.model_validate({"url": URL, "formats": list(formats)})


def test_the_json_mode_is_an_ai_stage_unless_the_json_format_answers_it() -> None:
    tracking = {"type": "changeTracking", "modes": ["json"], "schema": {"type": "object"}}
    alone = body("markdown", tracking)
    [stage] = pipeline(alone)
    assert stage["ai"]["into"] == TRACKED_JSON_FIELD and tracked_field(alone) == TRACKED_JSON_FIELD
    both = body("markdown", tracking, {"type": "json", "prompt": "the price"})
    [stage] = pipeline(both)
    assert stage["ai"]["into"] == "json" and tracked_field(both) == "json"
    named = body("markdown", "changeTracking")
    assert pipeline(named) == [] and tracked_field(named) is None
    tracking_obj = named.change_tracking()
    assert tracking_obj is not None and tracking_obj.modes == ["git-diff"]


async def test_tracking_needs_markdown_and_is_refused_where_nothing_is_compared() -> None:
    async with memory_client(MemoryJobStore()) as client:
        alone = await client.post("/v2/scrape", json={"url": URL, "formats": ["changeTracking"]})
        assert alone.status_code == 400 and "markdown" in alone.json()["error"]
        batch = await client.post(
            "/v2/batch/scrape", json={"urls": [URL], "formats": ["markdown", "changeTracking"]}
        )
        assert batch.status_code == 400 and "/v2/scrape" in batch.json()["error"]
        crawl = await client.post(
            "/v2/crawl",
            json={"url": URL, "scrapeOptions": {"formats": ["markdown", "changeTracking"]}},
        )
        assert crawl.status_code == 400 and crawl.json()["field"] == "scrapeOptions.formats"


async def test_a_page_alternating_two_versions_of_5000_lines_compares_in_its_budget() -> None:
    """The review: two versions of a page of short lines held the dispatcher's event loop for
    21 s (1,300 lines). With the real budgeted process, the comparison answers a diff within
    its budget and the loop turns all along."""
    lines = [str(n % 3) for n in range(5000)]
    work = BudgetedProcesses(1)
    tracker = ChangeTracker(
        MemoryMonitorChecks(), PageComparisons(work, Budget("page comparison", "X", 2.0)), _now
    )
    try:
        async with ticking() as ticks:
            for job, text in (("j1", "\n".join(lines)), ("j2", "\n".join(reversed(lines)))):
                answer = await tracker.tracked(
                    "team-a", None, scraped(job, text), ["git-diff"], TRACKED_JSON_FIELD
                )
    finally:
        await work.close()
    assert answer["changeStatus"] == "changed"
    assert answer["diff"]["text"].startswith("--- previous\n+++ current\n@@ ")
    assert ticks.count >= 1


def _now() -> datetime:
    return datetime.now(UTC)
