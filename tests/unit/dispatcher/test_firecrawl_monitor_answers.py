"""/v2/monitor over in-memory adapters: every answer parses as firecrawl-py 4.55's own models
(Monitor, MonitorCheck, MonitorCheckDetail) read it; bad input is Firecrawl's 400 naming the
field; what is not offered (search targets, email, a goal, the judge) says so."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from typing import Any

import pytest
from firecrawl.v2.types import Monitor, MonitorCheck, MonitorCheckDetail

from scrapejobs_shared.adapters.memory.job_store import MemoryJobStore
from scrapejobs_shared.domain.batch_transitions import FinishTask
from scrapejobs_shared.domain.records import TaskOutcome
from scrapejobs_shared.domain.statuses import TaskStatus
from scrapejobs_shared.ports.batch_store import BatchClaim, Claimed
from support.memory_dispatcher import memory_client

URLS = [f"https://shop.example/p/{n}" for n in range(5)]
BODY: dict[str, Any] = {
    "name": "prices",
    "schedule": {"text": "every 30 minutes", "timezone": "Europe/Paris"},
    "targets": [{"type": "scrape", "urls": URLS, "scrapeOptions": {"formats": ["markdown"]}}],
    "webhook": {"url": "https://hooks.example/in", "events": ["monitor.page"]},
    "retentionDays": 7,
}


async def run_job(store: MemoryJobStore, job_id: str, markdown: str) -> None:
    now = datetime.now(UTC)
    outcome = TaskOutcome(TaskStatus.SUCCEEDED, 200, {"markdown": markdown})
    for batch_id, batch in list(store.batches[job_id].items()):
        claim = await store.claim_batch(
            BatchClaim(job_id, batch_id, now, now + timedelta(seconds=30))
        )
        assert isinstance(claim, Claimed)
        await store.settle(claim.handle, [FinishTask(i.task_id, outcome) for i in batch.items], now)


async def test_a_monitor_in_firecrawls_shapes() -> None:
    store = MemoryJobStore()
    async with memory_client(store) as api:
        made = await api.post("/v2/monitor", json=BODY)
        assert made.status_code == 200, made.text
        monitor = Monitor(**made.json()["data"])
        assert monitor.status == "active" and monitor.schedule.cron == "*/30 * * * *"
        assert monitor.schedule.timezone == "Europe/Paris" and monitor.retention_days == 7
        assert monitor.targets[0]["urls"] == URLS and monitor.next_run_at is not None
        assert monitor.webhook is not None and monitor.webhook["events"] == ["monitor.page"]
        path = f"/v2/monitor/{monitor.id}"
        native = (await api.get(f"/v1/monitors/{monitor.id}")).json()
        assert native["webhook"]["shape"] == "firecrawl" and native["labels"] == {
            "firecrawl": "monitor"
        }

        listed = (await api.get("/v2/monitor", params={"limit": 5})).json()["data"]
        assert [Monitor(**m).id for m in listed] == [monitor.id]
        assert (await api.get("/v2/monitor", params={"offset": 1})).json()["data"] == []

        paused = Monitor(**(await api.patch(path, json={"status": "paused"})).json()["data"])
        assert paused.status == "paused" and paused.next_run_at is None

        ran = await api.post(f"{path}/run", json={"origin": "python-sdk@4.55.0"})  # as the SDK
        check = MonitorCheck(**ran.json()["data"])
        assert check.status == "queued" and check.trigger == "manual"
        job_id = native_check_job(await api.get(f"/v1/monitors/{monitor.id}/checks"))
        await run_job(store, job_id, "# Hello")
        detail = await api.get(f"{path}/checks/{check.id}", params={"limit": 2})
        assert detail.status_code == 200, detail.text
        first = MonitorCheckDetail(**(detail.json()["data"] | {"next": detail.json()["next"]}))
        assert first.status == "completed" and first.summary.total_pages == 5
        assert first.summary.new == 5 and len(first.pages) == 2 and first.next
        assert all(page.status == "new" and page.status_code == 200 for page in first.pages)
        urls = [page.url for page in first.pages]
        while first.next:
            following = await api.get(first.next.removeprefix("http://test"))
            body = following.json()
            first = MonitorCheckDetail(**(body["data"] | {"next": body["next"]}))
            urls += [page.url for page in first.pages]
        assert sorted(urls) == sorted(URLS)
        skipped = (await api.get(f"{path}/checks/{check.id}", params={"skip": 4})).json()
        assert len(skipped["data"]["pages"]) == 1 and skipped["next"] is None

        second = (await api.post(f"{path}/run")).json()["data"]
        job_id = native_check_job(await api.get(f"/v1/monitors/{monitor.id}/checks"))
        await run_job(store, job_id, "# Hello again")
        changed = (
            await api.get(f"{path}/checks/{second['id']}", params={"status": "changed"})
        ).json()["data"]
        detail2 = MonitorCheckDetail(**changed)
        assert detail2.summary.changed == 5 and len(detail2.pages) == 5
        diff = detail2.pages[0].diff
        assert diff is not None and "+# Hello again" in (diff.text or "")
        checks = (await api.get(f"{path}/checks")).json()["data"]
        assert [MonitorCheck(**c).id for c in checks] == [second["id"], check.id]

        assert (await api.delete(path)).json() == {"success": True}
        gone = await api.get(path)
        assert gone.status_code == 404 and gone.json()["success"] is False


def native_check_job(listed: Any) -> str:
    return str(listed.json()["checks"][0]["job_id"])


@pytest.mark.parametrize(
    ("change", "field"),
    [
        ({"schedule": {"cron": "61 * * * *"}}, "schedule.cron"),
        ({"targets": [{"type": "search", "queries": ["x"]}]}, "targets[0].type"),
        ({"targets": [{"type": "scrape", "urls": ["ftp://x.example/"]}]}, "targets[0].urls[0]"),
        ({"targets": [{"type": "scrape"}]}, "targets[0].urls"),
        ({"targets": []}, "targets"),
        ({"goal": "tell me when prices drop"}, "goal"),
        ({"judgeEnabled": True}, "judgeEnabled"),
        ({"notification": {"email": {"enabled": True, "recipients": ["a@b.c"]}}}, "notification"),
        ({"retentionDays": 0}, "retentionDays"),
        (
            {"targets": [{"type": "crawl", "url": "https://d.example/", "crawlOptions": {"x": 1}}]},
            "targets[0].crawlOptions.x",
        ),
        ({"targets": [{"type": "crawl", "crawlOptions": {"limit": 5}}]}, "targets[0].url"),
    ],
)
async def test_bad_or_unoffered_input_is_a_400_naming_its_field(
    change: dict[str, Any], field: str
) -> None:
    async with memory_client(MemoryJobStore()) as api:
        answer = await api.post("/v2/monitor", json=BODY | change)
        assert answer.status_code == 400, answer.text
        body = answer.json()
        assert body["success"] is False and field in (body.get("field") or body["error"]), body
        assert (await api.get("/v2/monitor")).json()["data"] == []


async def test_a_crawl_target_and_kept_targets() -> None:
    async with memory_client(MemoryJobStore()) as api:
        target = {
            "type": "crawl",
            "url": "https://docs.example/guide/",
            "crawlOptions": {"limit": 50, "includePaths": ["^/guide/"]},
        }
        made = await api.post("/v2/monitor", json=BODY | {"targets": [target]})
        assert made.status_code == 200, made.text
        monitor = Monitor(**made.json()["data"])
        assert monitor.targets[0]["type"] == "crawl"
        native = (await api.get(f"/v1/monitors/{monitor.id}")).json()
        assert native["crawl"]["max_pages"] == 50 and native["crawl"]["include"] == ["^/guide/"]
        kept = await api.patch(f"/v2/monitor/{monitor.id}", json={"targets": [target]})
        assert kept.status_code == 400 and "targets" in kept.text
