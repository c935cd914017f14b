"""Monitors on the real stack: checks run as jobs against a loopback site whose pages change
between checks; each page found new, same, changed (typed field diffs and a markdown diff),
removed, or held back by a noise rule; a check is never overlapped."""

from __future__ import annotations

import asyncio
import base64
import json
import os
import time
import uuid
from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from typing import Any

import httpx
import pytest
from typer.testing import CliRunner

from scrapejobs_client import Client
from scrapejobs_client.cli.app import app
from scrapejobs_devstack.local_scheduler import LocalScheduler, ScheduledCall
from support.site import Site
from support.webhook_receiver import WebhookReceiver

SECRET = "whsec_" + base64.b64encode(os.urandom(32)).decode()

EXTRACT = {
    "price": {"css": "p.price::text", "type": "float"},
    "stock": {"css": "p.stock::text"},
    "tags": {"css": "li::text", "all": True},
}


def shop_page(title: str, price: str, stock: str, tags: list[str], note: str = "") -> str:
    items = "".join(f"<li>{tag}</li>" for tag in tags)
    return (
        f"<html><head><title>{title}</title></head><body><main><h1>{title}</h1>"
        f'<p class="price">{price}</p><p class="stock">{stock}</p><ul>{items}</ul>'
        f"<p>{note or 'A fine thing to own.'}</p>"
        f'<p id="clock">Rendered at {time.monotonic()}</p></main></body></html>'
    )


async def finished_check(
    api: httpx.AsyncClient, monitor_id: str, check_id: str, timeout_s: float = 90
) -> dict[str, Any]:
    deadline = time.monotonic() + timeout_s
    while True:
        check = (await api.get(f"/v1/monitors/{monitor_id}/checks/{check_id}")).json()
        if check["status"] in ("completed", "partial", "failed", "skipped_overlap"):
            return dict(check)
        assert time.monotonic() < deadline, f"check did not finish: {check}"
        await asyncio.sleep(0.3)


async def run_check(
    api: httpx.AsyncClient, monitor_id: str
) -> tuple[dict[str, Any], dict[str, Any]]:
    """Run a check to its end: the check and its pages by URL."""
    started = await api.post(f"/v1/monitors/{monitor_id}:run")
    assert started.status_code == 201, started.text
    check = await finished_check(api, monitor_id, started.json()["id"])
    listed = await api.get(
        f"/v1/monitors/{monitor_id}/checks/{check['id']}/pages", params={"page_size": 100}
    )
    assert listed.status_code == 200, listed.text
    return check, {page["url"]: page for page in listed.json()["pages"]}


@pytest.fixture
def receiver() -> Iterator[WebhookReceiver]:
    receiver = WebhookReceiver(SECRET).start()
    yield receiver
    receiver.stop()


async def test_checks_find_pages_new_same_changed_and_removed(
    api, site: Site, receiver: WebhookReceiver
) -> None:
    key = uuid.uuid4().hex[:8]
    paths = {name: f"{key}-{name}" for name in ("cheap", "gone", "steady", "noisy", "broken")}
    urls = {name: f"{site.url}/watched/{path}" for name, path in paths.items()}

    def publish(name: str, *args: Any, **kwargs: Any) -> None:
        site.watched[paths[name]] = (200, shop_page(name, *args, **kwargs))

    publish("cheap", "10.50", "sold out", ["new", "sale"])
    publish("gone", "5.00", "in stock", ["basic"])
    publish("steady", "7.00", "in stock", ["basic"])
    publish("noisy", "100.00", "in stock", ["basic"])
    publish("broken", "3.00", "in stock", ["basic"])
    site.unvalidated.add(paths["steady"])  # no ETag: its body's digest tells it unchanged
    body = {
        "urls": list(urls.values()),
        "extract": EXTRACT,
        "name": f"shop {key}",
        "schedule": {"text": "daily at 9:00", "timezone": "Europe/Paris"},
        "rules": {
            "thresholds": {"price": {"relative": 0.01}},
            "ignore_selectors": ["#clock"],
            "min_text_change": 0.3,  # a price line alone is a fifth of these pages
        },
        "webhook": {"url": f"{receiver.url}/{key}", "secret": SECRET},
    }
    made = await api.post("/v1/monitors", json=body)
    assert made.status_code == 201, made.text
    monitor_id = made.json()["id"]

    first, pages = await run_check(api, monitor_id)
    assert first["status"] == "completed" and first["trigger"] == "manual"
    assert first["summary"]["new"] == 5 and first["summary"]["total"] == 5
    assert {page["status"] for page in pages.values()} == {"new"}

    # unchanged: four pages answer the conditional request 304, the fifth its same body
    second, pages = await run_check(api, monitor_id)
    assert second["summary"]["same"] == 5, pages
    assert {name: site.not_modified[path] for name, path in paths.items()} == {
        "cheap": 1,
        "gone": 1,
        "steady": 0,
        "noisy": 1,
        "broken": 1,
    }
    assert {page["status"] for page in pages.values()} == {"same"}
    job = (await api.get(f"/v1/jobs/{second['job_id']}")).json()
    assert job["status"] == "completed" and job["counts"]["succeeded"] == 5
    kept = (await api.get(f"/v1/jobs/{second['job_id']}/results")).json()
    assert kept["results"] == []  # an unchanged page keeps no result of its own

    publish("cheap", "9.99", "in stock", ["sale", "last items"])
    del site.watched[paths["gone"]]
    publish("noisy", "100.40", "in stock", ["basic"])  # under the 1% threshold
    # a new clock line: an ignored selector, so the page is the same
    publish("steady", "7.00", "in stock", ["basic"])
    site.watched[paths["broken"]] = (403, "<h1>Forbidden</h1>")  # fails: an error
    third, pages = await run_check(api, monitor_id)
    assert third["status"] == "partial"  # a page could not be fetched
    assert (third["summary"]["changed"], third["summary"]["removed"]) == (2, 1)
    assert third["summary"]["error"] == 1 and third["summary"]["same"] == 1
    assert pages[urls["steady"]]["status"] == "same"
    broken = pages[urls["broken"]]
    assert broken["status"] == "error" and broken["status_code"] == 403
    assert broken["error"] == "HTTP 403" and broken["notify"] is False

    cheap = pages[urls["cheap"]]
    assert cheap["status"] == "changed" and cheap["notify"] is True
    fields = cheap["diff"]["fields"]
    assert fields["price"]["previous"] == 10.5 and fields["price"]["current"] == 9.99
    assert fields["price"]["change"] == -0.51 and round(fields["price"]["change_pct"], 2) == -4.86
    assert fields["stock"] == {"previous": "sold out", "current": "in stock"}
    assert fields["tags"]["added"] == ["last items"] and fields["tags"]["removed"] == ["new"]
    assert "-10.50" in cheap["diff"]["text"] and "+9.99" in cheap["diff"]["text"]

    gone = pages[urls["gone"]]
    assert gone["status"] == "removed" and gone["status_code"] == 404

    noisy = pages[urls["noisy"]]
    assert noisy["status"] == "changed" and noisy["notify"] is False
    assert noisy["diff"]["fields"]["price"]["held_back_by"] == "thresholds.price.relative"
    assert "thresholds.price.relative" in noisy["held_back_by"]

    only_changed = await api.get(
        f"/v1/monitors/{monitor_id}/checks/{third['id']}/pages", params={"status": "changed"}
    )
    assert {p["url"] for p in only_changed.json()["pages"]} == {urls["cheap"], urls["noisy"]}
    checks = (await api.get(f"/v1/monitors/{monitor_id}/checks")).json()["checks"]
    assert [c["id"] for c in checks] == [third["id"], second["id"], first["id"]]
    monitor = (await api.get(f"/v1/monitors/{monitor_id}")).json()
    assert monitor["checks"] == 3 and monitor["last_check_id"] == third["id"]

    # signed events, each once: every page new, then nothing but the ends, then the changed
    # page that passed the rules and the removed one (the held-back one is not announced)
    events = await receiver.once_received(f"/{key}", 5 + 1 + 1 + 2 + 1)
    assert all(event.payload is not None and event.answered == 204 for event in events)
    assert len({event.webhook_id for event in events}) == len(events)
    told = sorted(
        (e.payload["data"]["check_id"], e.payload["type"], e.payload["data"].get("url", ""))
        for e in events
        if e.payload is not None
    )
    expected = [(first["id"], "monitor.check.completed", "")]
    expected += [(first["id"], "monitor.page", url) for url in urls.values()]
    expected += [(second["id"], "monitor.check.completed", "")]
    expected += [(third["id"], "monitor.check.completed", "")]
    expected += [(third["id"], "monitor.page", urls[name]) for name in ("cheap", "gone")]
    assert told == sorted(expected)
    changed = next(
        e.payload["data"]
        for e in events
        if e.payload is not None
        and e.payload["data"].get("url") == urls["cheap"]
        and e.payload["data"]["check_id"] == third["id"]
    )
    assert changed["status"] == "changed" and changed["diff"]["fields"]["price"]["current"] == 9.99
    ends = [e.payload for e in events if e.payload and e.payload["type"].endswith("completed")]
    assert {end["data"]["summary"]["same"] for end in ends} == {0, 5, 1}


async def test_a_check_is_never_overlapped(api, site: Site) -> None:
    key = uuid.uuid4().hex[:8]
    body = {
        "url": f"{site.url}/slow/{key}?s=3&times=1",
        "name": f"slow {key}",
        "schedule": {"text": "hourly"},
    }
    monitor_id = (await api.post("/v1/monitors", json=body)).json()["id"]
    first = (await api.post(f"/v1/monitors/{monitor_id}:run")).json()
    second = await api.post(f"/v1/monitors/{monitor_id}:run")
    assert second.status_code == 201 and second.json()["status"] == "skipped_overlap"
    assert second.json()["job_id"] is None
    done = await finished_check(api, monitor_id, first["id"])
    assert done["status"] == "completed" and done["summary"]["new"] == 1
    third, _ = await run_check(api, monitor_id)  # the previous one ended: this one runs
    assert third["status"] == "completed" and third["summary"]["same"] == 1


def test_the_client_and_the_cli_watch_a_page(stack, site: Site) -> None:
    key = uuid.uuid4().hex[:8]
    path = f"{key}-cli"
    site.watched[path] = (200, shop_page("cli", "12.00", "in stock", ["a"]))
    url = f"{site.url}/watched/{path}"
    base = ["--api", stack.config.dispatcher_url]
    runner = CliRunner()
    made = runner.invoke(
        app, [*base, "monitor", "create", url, "--name", f"cli {key}", "--schedule", "0 9 * * 1"]
    )
    assert made.exit_code == 0, made.output
    monitor_id = made.stdout.strip()
    with Client(stack.config.dispatcher_url) as client:
        monitor = client.get_monitor(monitor_id)
        assert monitor.schedule["cron"] == "0 9 * * 1" and monitor.status == "active"
        first = client.run_monitor(monitor_id)
        assert (
            client.wait_check(monitor_id, first.id, interval_s=0.3, timeout_s=90).summary["new"]
            == 1
        )
        site.watched[path] = (
            200,
            shop_page("cli", "11.00", "in stock", ["a"], note="Now cheaper."),
        )
    ran = runner.invoke(app, [*base, "monitor", "run", monitor_id, "--wait", "--json"])
    assert ran.exit_code == 0, ran.output
    assert json.loads(ran.stdout)["summary"]["changed"] == 1
    shown = runner.invoke(app, [*base, "monitor", "diff", monitor_id])
    assert shown.exit_code == 0, shown.output
    assert "changed" in shown.stdout and "Now cheaper." in shown.stdout
    listed = runner.invoke(app, [*base, "monitor", "ls", "--json"])
    assert monitor_id in {m["id"] for m in json.loads(listed.stdout)["monitors"]}
    paused = runner.invoke(app, [*base, "monitor", "pause", monitor_id, "--json"])
    assert json.loads(paused.stdout)["status"] == "paused"
    checks = runner.invoke(app, [*base, "monitor", "checks", monitor_id, "--json"])
    assert len(json.loads(checks.stdout)["checks"]) == 2


def test_a_schedule_fires_on_time_and_a_paused_monitor_runs_nothing(stack, site: Site) -> None:
    """The local stack's scheduler (make dev's, ticking every second here) starts a check at
    its minute, and the tick compares it when its job ends, unread."""
    key = uuid.uuid4().hex[:8]
    path = f"{key}-scheduled"
    site.watched[path] = (200, shop_page("scheduled", "3.00", "in stock", ["a"]))
    body = {"url": f"{site.url}/watched/{path}", "schedule": {"cron": "* * * * *"}}
    tick = ScheduledCall("/v1/maintenance/monitors", 1.0)
    with httpx.Client(base_url=stack.config.dispatcher_url, timeout=30) as api:
        active = api.post("/v1/monitors", json=body | {"name": f"every minute {key}"}).json()
        paused = api.post(
            "/v1/monitors", json=body | {"name": f"paused {key}", "status": "paused"}
        ).json()
        due = datetime.fromisoformat(active["next_check_at"])
        # the schedule's minute, and this monitor's own offset (a tenth of the interval: 6 s)
        assert due.second < 6 and due > datetime.now(UTC)
        scheduler = LocalScheduler(stack.config.dispatcher_url, [tick], tell=lambda _: None)
        scheduler.start()
        try:
            deadline = time.monotonic() + 120
            while True:
                checks = api.get(f"/v1/monitors/{active['id']}/checks").json()["checks"]
                if checks and checks[-1]["status"] == "completed":
                    break
                assert time.monotonic() < deadline, checks
                time.sleep(0.5)
        finally:
            scheduler.stop()
        first = checks[-1]
        assert first["trigger"] == "scheduled" and first["summary"]["new"] == 1
        started = datetime.fromisoformat(first["created_at"])
        assert due <= started <= due + timedelta(seconds=15), (due, started)
        monitor = api.get(f"/v1/monitors/{active['id']}").json()
        assert datetime.fromisoformat(monitor["next_check_at"]) > due
        assert api.get(f"/v1/monitors/{paused['id']}/checks").json()["checks"] == []
        for made in (active, paused):
            api.delete(f"/v1/monitors/{made['id']}")
