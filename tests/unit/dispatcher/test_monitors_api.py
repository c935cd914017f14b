"""/v1/monitors over in-memory adapters: create, list, read, change, pause and resume,
delete; bad input a 422 naming its field; another tenant's monitor a 404."""

from __future__ import annotations

import dataclasses
from datetime import UTC, datetime, timedelta
from typing import Any

import pytest

from scrapejobs_dispatcher.api_keys import generate_api_key
from scrapejobs_dispatcher.settings import DispatcherSettings
from scrapejobs_shared.adapters.memory.job_store import MemoryJobStore
from scrapejobs_shared.adapters.memory.monitor_checks import MemoryMonitorChecks
from scrapejobs_shared.adapters.memory.monitor_store import MemoryMonitorStore
from support.memory_dispatcher import memory_client

BODY: dict[str, Any] = {
    "urls": ["https://shop.example/p/1", "https://shop.example/p/2"],
    "extract": {"price": {"css": ".price::text", "type": "float"}},
    "name": "prices",
    "schedule": {"cron": "*/30 * * * *", "timezone": "Europe/Paris"},
    "rules": {"thresholds": {"price": {"relative": 0.01}}, "notify_when": ["price < 20"]},
    "webhook": {"url": "https://hooks.example/in", "secret": "whsec_" + "QUJDREVGR0hJSktMTU5PUA=="},
}


def at(text: str | None) -> datetime | None:
    return None if text is None else datetime.fromisoformat(text)


async def test_a_monitor_is_created_read_listed_changed_and_deleted() -> None:
    async with memory_client(MemoryJobStore()) as api:
        made = await api.post("/v1/monitors", json=BODY)
        assert made.status_code == 201, made.text
        monitor = made.json()
        assert monitor["id"].startswith("mon_") and monitor["status"] == "active"
        assert monitor["schedule"] == BODY["schedule"] | {"text": None}
        assert monitor["checks"] == 0 and monitor["last_check_id"] is None
        assert monitor["webhook"]["secret"] is None  # never shown again
        next_at = at(monitor["next_check_at"])
        assert next_at is not None and next_at.minute in (0, 30) and next_at.second == 0
        path = f"/v1/monitors/{monitor['id']}"
        assert (await api.get(path)).json() == monitor

        second = (await api.post("/v1/monitors", json=BODY | {"name": "second"})).json()
        first_page = (await api.get("/v1/monitors", params={"page_size": 1})).json()
        assert [m["id"] for m in first_page["monitors"]] == [second["id"]]
        rest = await api.get(
            "/v1/monitors", params={"page_size": 1, "page_token": first_page["next_page_token"]}
        )
        assert [m["id"] for m in rest.json()["monitors"]] == [monitor["id"]]
        assert rest.json()["next_page_token"] is None

        changed = await api.patch(path, json={"name": "renamed", "schedule": {"text": "hourly"}})
        assert changed.status_code == 200, changed.text
        assert changed.json()["name"] == "renamed"
        hourly = at(changed.json()["next_check_at"])
        assert hourly is not None and hourly.minute == 0
        assert changed.json()["rules"] == monitor["rules"]  # kept

        paused = await api.post(f"{path}:pause")
        assert paused.json()["status"] == "paused" and paused.json()["next_check_at"] is None
        assert (await api.post(f"{path}:pause")).json()["status"] == "paused"  # idempotent
        resumed = await api.post(f"{path}:resume")
        assert resumed.json()["status"] == "active" and resumed.json()["next_check_at"]

        assert (await api.delete(path)).status_code == 204
        assert (await api.get(path)).status_code == 404
        assert (await api.delete(path)).status_code == 404


@pytest.mark.parametrize(
    ("change", "field"),
    [
        ({"schedule": {"cron": "61 * * * *"}}, "schedule.cron"),
        (
            {"schedule": {"text": "hourly", "timezone": "Mars/Base"}},
            "schedule.timezone",
        ),
        ({"rules": {"notify_when": ["price"]}}, "rules.notify_when"),
        ({"rules": {"ignore_fields": ["colour"]}}, "rules"),
        ({"urls": ["ftp://shop.example/"]}, "urls[0]"),
        ({"name": ""}, "name"),
    ],
)
async def test_a_bad_monitor_is_a_422_naming_its_field(change: dict[str, Any], field: str) -> None:
    async with memory_client(MemoryJobStore()) as api:
        answer = await api.post("/v1/monitors", json=BODY | change)
        assert answer.status_code == 422, answer.text
        assert answer.json()["error"]["field"] == field, answer.text
        assert (await api.get("/v1/monitors")).json()["monitors"] == []  # nothing kept


async def test_a_bad_change_is_refused_and_the_monitor_kept() -> None:
    async with memory_client(MemoryJobStore()) as api:
        monitor = (await api.post("/v1/monitors", json=BODY)).json()
        path = f"/v1/monitors/{monitor['id']}"
        unknown = await api.patch(path, json={"rules": {"ignore_fields": ["colour"]}})
        assert unknown.status_code == 422 and "colour" in unknown.text
        null = await api.patch(path, json={"schedule": None})
        assert null.status_code == 422 and "schedule: cannot be null" in null.text
        many = {"rules": {"ignore_selectors": [f".n{n}" for n in range(51)]}}
        selectors = await api.patch(path, json=many)
        assert selectors.status_code == 422 and "at most" in selectors.text
        targets = await api.patch(path, json={"urls": ["https://other.example/"]})
        assert targets.status_code == 422
        assert (await api.get(path)).json() == monitor
        assert (await api.get("/v1/monitors/mon_x:pause")).status_code in (404, 405)
        assert (await api.get("/v1/monitors/not-an-id")).status_code == 422


async def test_another_tenants_monitor_is_not_found() -> None:
    admin_key, admin_digest = generate_api_key()
    settings = DispatcherSettings(auth_mode="api_key", api_key_hashes=admin_digest)
    async with memory_client(MemoryJobStore(), settings, monitor_store=MemoryMonitorStore()) as api:
        keys = {}
        for tenant in ("team-a", "team-b"):
            made = await api.post(
                "/v1/keys", json={"tenant": tenant}, headers={"X-API-Key": admin_key}
            )
            keys[tenant] = {"X-API-Key": made.json()["key"]}
        monitor = (await api.post("/v1/monitors", json=BODY, headers=keys["team-a"])).json()
        path = f"/v1/monitors/{monitor['id']}"
        for call in (
            api.get(path, headers=keys["team-b"]),
            api.patch(path, json={"name": "mine"}, headers=keys["team-b"]),
            api.post(f"{path}:pause", headers=keys["team-b"]),
            api.delete(path, headers=keys["team-b"]),
        ):
            assert (await call).status_code == 404
        listed = await api.get("/v1/monitors", headers=keys["team-b"])
        assert listed.json()["monitors"] == []
        assert (await api.get(path, headers=keys["team-a"])).json()["name"] == "prices"
        assert (await api.post("/v1/monitors", json=BODY)).status_code == 401


async def test_the_tick_starts_each_due_check_once_and_moves_its_time_on() -> None:
    checks = MemoryMonitorChecks()
    monitors = MemoryMonitorStore(checks)
    async with memory_client(
        MemoryJobStore(), monitor_store=monitors, monitor_checks=checks
    ) as api:
        due = (await api.post("/v1/monitors", json=BODY | {"name": "due"})).json()
        later = (await api.post("/v1/monitors", json=BODY | {"name": "later"})).json()
        paused = (await api.post("/v1/monitors", json=BODY | {"status": "paused"})).json()
        past = datetime.now(UTC) - timedelta(minutes=1)
        record = monitors.monitors[due["id"]]
        monitors.monitors[due["id"]] = dataclasses.replace(record, next_check_at=past)

        tick = await api.post("/v1/maintenance/monitors")
        assert tick.status_code == 200 and tick.json() == {"due": 1, "compared": 0}
        [started] = (await api.get(f"/v1/monitors/{due['id']}/checks")).json()["checks"]
        assert started["trigger"] == "scheduled" and started["status"] == "queued"
        assert started["job_id"] and (await api.get(f"/v1/jobs/{started['job_id']}")).is_success
        moved = (await api.get(f"/v1/monitors/{due['id']}")).json()
        next_at = at(moved["next_check_at"])
        assert next_at is not None and next_at > datetime.now(UTC)
        assert moved["last_check_id"] == started["id"] and moved["checks"] == 1

        assert (await api.post("/v1/maintenance/monitors")).json() == {"due": 0, "compared": 0}
        # the same slot again (a tick retried after a crash): the same check, no second job
        monitors.monitors[due["id"]] = dataclasses.replace(
            monitors.monitors[due["id"]], next_check_at=past
        )
        assert (await api.post("/v1/maintenance/monitors")).json() == {"due": 1, "compared": 0}
        assert len((await api.get(f"/v1/monitors/{due['id']}/checks")).json()["checks"]) == 1
        for idle in (later, paused):
            assert (await api.get(f"/v1/monitors/{idle['id']}/checks")).json()["checks"] == []


async def test_a_monitor_whose_checks_could_not_run_here_is_refused() -> None:
    """An ai stage without a provider configured: the monitor is a 422 naming it, not a
    monitor whose every check fails to start (also as Firecrawl's changeTracking json mode)."""
    schema = {"type": "object", "properties": {"price": {"type": "number"}}}
    ai = {"ai": {"prompt": "What does it cost?", "schema": schema}}
    async with memory_client(MemoryJobStore()) as api:
        refused = await api.post("/v1/monitors", json=BODY | {"pipeline": [ai]})
        assert refused.status_code == 422 and refused.json()["error"]["field"] == "pipeline[0].ai"
        tracking = {"type": "changeTracking", "modes": ["json"], "schema": schema}
        firecrawl = await api.post(
            "/v2/monitor",
            json={
                "name": "prices",
                "schedule": {"text": "hourly"},
                "targets": [
                    {
                        "type": "scrape",
                        "urls": BODY["urls"],
                        "scrapeOptions": {"formats": ["markdown", tracking]},
                    }
                ],
            },
        )
        assert firecrawl.status_code == 400 and "provider" in firecrawl.json()["error"]
        assert (await api.get("/v1/monitors")).json()["monitors"] == []
