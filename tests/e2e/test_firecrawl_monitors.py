"""Firecrawl's own Python SDK (firecrawl-py, unmodified) watching pages through /v2/monitor on
the emulator stack: a monitor created, listed, run, its checks read with their pages (paged
by the SDK itself), a page edited and found changed with its diff, the monitor paused and
deleted; its webhook's monitor.page and monitor.check.completed events in Firecrawl's body,
verified as Firecrawl's documentation verifies them."""

from __future__ import annotations

import time
import uuid
from collections.abc import Iterator
from typing import Any

import pytest
from firecrawl import Firecrawl
from firecrawl.v2.types import MonitorCheckDetail, PaginationConfig

from scrapejobs_devstack.stack import DEV_WEBHOOK_SECRET
from support.site import Site
from support.webhook_receiver import WebhookReceiver

pytestmark = [pytest.mark.emulators, pytest.mark.stack]
TRACKED = ["markdown", {"type": "changeTracking", "modes": ["git-diff"]}]


@pytest.fixture
def receiver() -> Iterator[WebhookReceiver]:
    receiver = WebhookReceiver(DEV_WEBHOOK_SECRET, firecrawl=True).start()
    yield receiver
    receiver.stop()


def finished(firecrawl: Firecrawl, monitor_id: str, check_id: str) -> MonitorCheckDetail:
    deadline = time.monotonic() + 90
    while True:
        check = firecrawl.get_monitor_check(monitor_id, check_id)
        if check.status in ("completed", "partial", "failed"):
            return check
        assert time.monotonic() < deadline, check
        time.sleep(0.3)


def page(title: str, body: str) -> str:
    head = f"<html><head><title>{title}</title></head>"
    return f"{head}<body><main><h1>{title}</h1><p>{body}</p></main></body></html>"


def test_the_sdk_watches_pages_and_reads_their_changes(
    firecrawl: Firecrawl, site: Site, receiver: WebhookReceiver
) -> None:
    key = uuid.uuid4().hex[:8]
    paths = [f"{key}-fc-{n}" for n in range(3)]
    for n, path in enumerate(paths):
        site.watched[path] = (200, page(f"Page {n}", "First words."))
    urls = [f"{site.url}/watched/{path}" for path in paths]
    monitor = firecrawl.create_monitor(
        name=f"fc {key}",
        schedule={"text": "daily at 9:00", "timezone": "Europe/Paris"},
        targets=[{"type": "scrape", "urls": urls, "scrapeOptions": {"formats": TRACKED}}],
        webhook={"url": f"{receiver.url}/{key}", "metadata": {"team": "docs"}},
        retention_days=7,
    )
    assert monitor.status == "active" and monitor.schedule.cron == "0 9 * * *"
    assert monitor.id in {m.id for m in firecrawl.list_monitors(limit=100)}
    assert firecrawl.get_monitor(monitor.id).name == f"fc {key}"

    first = firecrawl.run_monitor(monitor.id)
    done = finished(firecrawl, monitor.id, first.id)
    assert done.status == "completed" and done.summary.new == 3 and done.summary.total_pages == 3
    assert sorted(p.url for p in done.pages) == sorted(urls)

    site.watched[paths[1]] = (200, page("Page 1", "Second words, and more of them."))
    second = firecrawl.run_monitor(monitor.id)
    checked = finished(firecrawl, monitor.id, second.id)
    assert (checked.summary.same, checked.summary.changed) == (2, 1)
    [changed] = firecrawl.get_monitor_check(monitor.id, second.id, status="changed").pages
    assert changed.url == urls[1] and changed.diff is not None
    assert "+Second words, and more of them." in (changed.diff.text or "")
    paged = firecrawl.get_monitor_check(
        monitor.id, second.id, limit=1, pagination_config=PaginationConfig(auto_paginate=True)
    )
    assert sorted(p.url for p in paged.pages) == sorted(urls)  # the SDK followed next
    checks = firecrawl.list_monitor_checks(monitor.id)
    assert [c.id for c in checks] == [second.id, first.id]

    paused = firecrawl.update_monitor(monitor.id, status="paused")
    assert paused.status == "paused" and paused.next_run_at is None

    deadline = time.monotonic() + 60
    while len([r for r in receiver.for_path(f"/{key}") if r.payload]) < 3 + 1 + 1 + 1:
        assert time.monotonic() < deadline, receiver.for_path(f"/{key}")
        time.sleep(0.2)
    events = [r.payload for r in receiver.for_path(f"/{key}") if r.payload]
    kinds = sorted((e["type"], e["data"][0].get("url", "")) for e in events)
    assert kinds == sorted(
        [("monitor.page", url) for url in urls]
        + [("monitor.page", urls[1])]
        + [("monitor.check.completed", "")] * 2
    )
    assert all(e["id"] == monitor.id and e["metadata"] == {"team": "docs"} for e in events)

    assert firecrawl.delete_monitor(monitor.id) is True
    assert monitor.id not in {m.id for m in firecrawl.list_monitors(limit=100)}


def test_change_tracking_compares_each_scrape_with_the_last(
    firecrawl: Firecrawl, site: Site
) -> None:
    key = uuid.uuid4().hex[:8]
    path = f"{key}-tracked"
    site.watched[path] = (200, page("Tracked", "One thing."))
    url = f"{site.url}/watched/{path}"
    formats: list[Any] = ["markdown", {"type": "changeTracking", "modes": ["git-diff"], "tag": key}]

    first = firecrawl.scrape(url, formats=formats, max_age=0)
    assert first.change_tracking is not None
    assert first.change_tracking["changeStatus"] == "new"
    assert first.change_tracking["previousScrapeAt"] is None
    second = firecrawl.scrape(url, formats=formats, max_age=0)
    assert second.change_tracking is not None
    assert second.change_tracking["changeStatus"] == "same"
    assert second.change_tracking["previousScrapeAt"] is not None

    site.watched[path] = (200, page("Tracked", "Another thing."))
    third = firecrawl.scrape(url, formats=formats, max_age=0)
    tracking = third.change_tracking
    assert tracking is not None and tracking["changeStatus"] == "changed"
    assert "-One thing." in tracking["diff"]["text"]
    assert "+Another thing." in tracking["diff"]["text"]
    assert tracking["diff"]["json"]["files"][0]["additions"] == 1
    untagged = firecrawl.scrape(url, formats=["markdown", "changeTracking"], max_age=0)
    assert untagged.change_tracking is not None
    assert untagged.change_tracking["changeStatus"] == "new"  # another tag: its own history
