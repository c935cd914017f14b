"""/v1/monitors over in-memory adapters: create, list, read, change, pause and resume,
delete; bad input a 422 naming its field; another tenant's monitor a 404."""

from __future__ import annotations

import asyncio
import dataclasses
from datetime import UTC, datetime, timedelta
from typing import Any

import pytest

from scrapejobs_dispatcher.settings import DispatcherSettings
from scrapejobs_dispatcher.tenants.api_keys import generate_api_key
from scrapejobs_shared.adapters.memory.api_keys import MemoryApiKeyStore
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


IDLE = {"due": 0, "compared": 0, "failed": 0, "errors": 0, "left": 0}  # a tick with nothing to do


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
        assert next_at is not None and next_at.microsecond == 0
        slot = next_at.replace(minute=next_at.minute // 30 * 30, second=0)  # the schedule's
        assert timedelta(0) <= next_at - slot < timedelta(minutes=3)  # its monitor's offset
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
        assert hourly is not None and hourly.minute < 5  # within its offset of the hour
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
        assert tick.status_code == 200 and tick.json() == IDLE | {"due": 1}
        [started] = (await api.get(f"/v1/monitors/{due['id']}/checks")).json()["checks"]
        assert started["trigger"] == "scheduled" and started["status"] == "queued"
        assert started["job_id"] and (await api.get(f"/v1/jobs/{started['job_id']}")).is_success
        moved = (await api.get(f"/v1/monitors/{due['id']}")).json()
        next_at = at(moved["next_check_at"])
        assert next_at is not None and next_at > datetime.now(UTC)
        assert moved["last_check_id"] == started["id"] and moved["checks"] == 1

        assert (await api.post("/v1/maintenance/monitors")).json() == IDLE
        # the same slot again (a tick retried after a crash): the same check, no second job
        monitors.monitors[due["id"]] = dataclasses.replace(
            monitors.monitors[due["id"]], next_check_at=past
        )
        assert (await api.post("/v1/maintenance/monitors")).json() == IDLE | {"due": 1}
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


async def test_a_check_that_cannot_start_is_recorded_failed_and_the_others_run() -> None:
    """Tenant A's monitor fetches without verifying TLS; the deployment then turns that off.
    Its scheduled check is recorded failed with the reason and its schedule moves on; tenant
    B's monitor due at the same tick runs; A's monitor can still be paused, resumed, deleted."""
    admin_key, admin_digest = generate_api_key()
    store, checks = MemoryJobStore(), MemoryMonitorChecks()
    monitors = MemoryMonitorStore(checks)
    adapters: dict[str, Any] = {
        "monitor_store": monitors,
        "monitor_checks": checks,
        "api_keys": MemoryApiKeyStore(),  # the keys made by the first instance
    }
    keys: dict[str, dict[str, str]] = {}
    ids: dict[str, str] = {}
    allowing = DispatcherSettings(auth_mode="api_key", api_key_hashes=admin_digest)
    async with memory_client(store, allowing, **adapters) as api:
        for tenant in ("team-a", "team-b"):
            made = await api.post(
                "/v1/keys", json={"tenant": tenant}, headers={"X-API-Key": admin_key}
            )
            keys[tenant] = {"X-API-Key": made.json()["key"]}
        insecure = BODY | {"options": {"verify_tls": False}}
        for tenant, body in (("team-a", insecure), ("team-b", BODY)):
            made = await api.post("/v1/monitors", json=body, headers=keys[tenant])
            assert made.status_code == 201, made.text
            ids[tenant] = made.json()["id"]
    past = datetime.now(UTC) - timedelta(minutes=1)
    for monitor_id in ids.values():
        monitors.monitors[monitor_id] = dataclasses.replace(
            monitors.monitors[monitor_id], next_check_at=past
        )
    strict = allowing.model_copy(update={"allow_unverified_tls": False})
    async with memory_client(store, strict, **adapters) as api:
        tick = await api.post("/v1/maintenance/monitors", headers={"X-API-Key": admin_key})
        assert tick.status_code == 200 and tick.json() == IDLE | {"due": 1, "failed": 1}

        a_path, b_path = (f"/v1/monitors/{ids[t]}" for t in ("team-a", "team-b"))
        [failed] = (await api.get(f"{a_path}/checks", headers=keys["team-a"])).json()["checks"]
        assert failed["status"] == "failed" and "verifies TLS" in failed["error"]
        assert failed["trigger"] == "scheduled" and failed["finished_at"]
        moved = at((await api.get(a_path, headers=keys["team-a"])).json()["next_check_at"])
        assert moved is not None and moved > datetime.now(UTC)
        [ran] = (await api.get(f"{b_path}/checks", headers=keys["team-b"])).json()["checks"]
        assert ran["status"] == "queued" and ran["error"] is None
        job = await api.get(f"/v1/jobs/{ran['job_id']}", headers=keys["team-b"])
        assert job.is_success

        for action in (":pause", ":resume"):
            changed = await api.post(f"{a_path}{action}", headers=keys["team-a"])
            assert changed.status_code == 200, changed.text
        assert (await api.delete(a_path, headers=keys["team-a"])).status_code == 204
        # a tick again: nothing left failing, nothing started twice
        again = await api.post("/v1/maintenance/monitors", headers={"X-API-Key": admin_key})
        assert again.json() == IDLE


async def test_tenants_take_turns_in_a_tick() -> None:
    from scrapejobs_dispatcher.monitors.monitor_tick import round_robin

    assert round_robin(["a1", "a2", "a3", "b1", "c1", "c2"], lambda s: s[0]) == [
        "a1",
        "b1",
        "c1",
        "a2",
        "c2",
        "a3",
    ]


async def test_a_tenants_monitors_and_a_checks_pages_are_bounded() -> None:
    settings = DispatcherSettings(auth_mode="none", monitors_per_tenant=2, monitor_max_pages=3)
    async with memory_client(MemoryJobStore(), settings) as api:
        many = [f"https://shop.example/p/{n}" for n in range(4)]
        refused = await api.post("/v1/monitors", json=BODY | {"urls": many})
        assert refused.status_code == 422 and refused.json()["error"]["field"] == "urls"
        assert "SCRAPEJOBS_MONITOR_MAX_PAGES" in refused.json()["error"]["message"]
        crawl = {"start_url": "https://shop.example/", "max_pages": 4}
        body = {k: v for k, v in BODY.items() if k != "urls"} | {"crawl": crawl}
        refused = await api.post("/v1/monitors", json=body)
        assert refused.json()["error"]["field"] == "crawl.max_pages"
        first = (await api.post("/v1/monitors", json=BODY)).json()
        grown = await api.patch(f"/v1/monitors/{first['id']}", json={"name": "x"})
        assert grown.status_code == 200
        assert (await api.post("/v1/monitors", json=BODY)).status_code == 201
        third = await api.post("/v1/monitors", json=BODY)
        assert third.status_code == 422 and third.json()["error"]["field"] == "monitors"
        await api.delete(f"/v1/monitors/{first['id']}")
        assert (await api.post("/v1/monitors", json=BODY)).status_code == 201


async def test_300_parallel_creates_leave_the_cap_of_100() -> None:
    """The review's burst: the cap was a count, then a create, and 300 at once passed it."""
    settings = DispatcherSettings(auth_mode="none", monitors_per_tenant=100)
    async with memory_client(MemoryJobStore(), settings) as api:
        made = await asyncio.gather(*(api.post("/v1/monitors", json=BODY) for _ in range(300)))
    statuses = [answer.status_code for answer in made]
    assert statuses.count(201) == 100 and statuses.count(422) == 200


async def test_the_tick_goes_on_past_an_error_and_leaves_what_its_time_cannot_take() -> None:
    """A start that meets an error of ours is counted and tried next tick, the others run; a
    tick whose time is up leaves the rest to the next one."""
    from scrapejobs_dispatcher.monitors.monitor_tick import MonitorTick
    from scrapejobs_shared.domain.monitors import MonitorRecord, MonitorRequest

    checks = MemoryMonitorChecks()
    monitors = MemoryMonitorStore(checks)
    past = datetime.now(UTC) - timedelta(minutes=1)
    request = MonitorRequest.model_validate(BODY, strict=False)
    for n, tenant in enumerate(("team-a", "team-a", "team-b")):
        await monitors.create(
            MonitorRecord(f"mon_{n}", tenant, request, past, past, next_check_at=past), 100
        )

    class Runner:
        started: list[str] = []

        async def start(self, tenant: str, monitor_id: str, *_: object) -> None:
            if monitor_id == "mon_0":
                raise RuntimeError("a bug")
            self.started.append(monitor_id)

        async def settle(self, *_: object) -> None:
            raise AssertionError("no open checks here")

    tick = MonitorTick(monitors, checks, Runner(), lambda: datetime.now(UTC))  # type: ignore[arg-type]
    done = await tick.run()
    assert (done.due, done.errors, done.left) == (2, 1, 0)
    assert sorted(Runner.started) == ["mon_1", "mon_2"]
    assert monitors.monitors["mon_0"].next_check_at == past  # tried again next tick
    assert monitors.monitors["mon_1"].next_check_at > past
    later = await tick.run(budget_s=0)
    assert later.due == 0 and later.left == 1  # mon_0 is still due: the next tick's


async def test_a_tenants_backlog_of_open_checks_hides_no_other_tenants_check() -> None:
    """The review's case: a tenant's 150 checks still running fill the tick's oldest-first read
    of 100; another tenant's ended check is compared all the same."""
    from scrapejobs_dispatcher.monitors.monitor_tick import MonitorTick
    from scrapejobs_shared.domain.monitor_checks import CheckRecord, CheckStatus
    from scrapejobs_shared.domain.monitors import MonitorRecord, MonitorRequest

    checks = MemoryMonitorChecks()
    monitors = MemoryMonitorStore(checks)
    past = datetime.now(UTC) - timedelta(hours=1)
    request = MonitorRequest.model_validate(BODY, strict=False)
    owners = [("team-a", n) for n in range(150)] + [("team-b", 150)]
    for tenant, n in owners:
        record = MonitorRecord(f"mon_{n}", tenant, request, past, past, next_check_at=None)
        assert await monitors.create(record, 1000)
        at = past + timedelta(seconds=n)  # team-b's check is the newest
        await checks.add(
            CheckRecord(f"chk_{n}", f"mon_{n}", tenant, "scheduled", CheckStatus.RUNNING, at)
        )

    class Runner:
        settled: list[str] = []

        async def settle(self, monitor: MonitorRecord, check: CheckRecord) -> CheckRecord:
            self.settled.append(check.tenant)
            return check  # its job still runs

    tick = MonitorTick(monitors, checks, Runner(), lambda: datetime.now(UTC))  # type: ignore[arg-type]
    await tick.run(limit=100)
    assert "team-b" in Runner.settled
