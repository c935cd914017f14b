"""The dashboard's monitor pages over in-memory adapters: the list with each monitor's last
and next check, pause and resume and run-now buttons (htmx only, same origin), a monitor's
checks, and a check's changed pages with their field changes and text side by side."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from typing import Any

from scrapejobs_dispatcher.ui.monitor_presenters import side_by_side
from scrapejobs_shared.adapters.memory.job_store import MemoryJobStore
from scrapejobs_shared.domain.batch_transitions import FinishTask
from scrapejobs_shared.domain.records import TaskOutcome
from scrapejobs_shared.domain.statuses import TaskStatus
from scrapejobs_shared.ports.batch_store import BatchClaim, Claimed
from support.memory_dispatcher import memory_client

HTMX = {"HX-Request": "true"}
URLS = ["https://shop.example/p/1", "https://shop.example/p/2"]
BODY: dict[str, Any] = {
    "urls": URLS,
    "extract": {"price": {"css": ".price::text", "type": "float"}},
    "name": "shoe prices",
    "schedule": {"text": "daily at 9:00", "timezone": "Europe/Paris"},
}


async def run_job(store: MemoryJobStore, job_id: str, prices: dict[str, float]) -> None:
    now = datetime.now(UTC)
    for batch_id, batch in list(store.batches[job_id].items()):
        claim = await store.claim_batch(
            BatchClaim(job_id, batch_id, now, now + timedelta(seconds=30))
        )
        assert isinstance(claim, Claimed)
        changes = [
            FinishTask(
                i.task_id,
                TaskOutcome(
                    TaskStatus.SUCCEEDED,
                    200,
                    {"price": prices[i.url], "markdown": f"# Shoe\n\nNow {prices[i.url]}"},
                ),
            )
            for i in batch.items
        ]
        await store.settle(claim.handle, changes, now)


async def test_monitor_pages_show_checks_and_diffs_side_by_side() -> None:
    store = MemoryJobStore()
    async with memory_client(store) as client:
        monitor = (await client.post("/v1/monitors", json=BODY)).json()
        listed = await client.get("/ui/monitors")
        assert listed.status_code == 200 and "shoe prices" in listed.text
        assert "daily at 9:00 (Europe/Paris)" in listed.text and "none yet" in listed.text
        assert f'hx-post="/ui/monitors/{monitor["id"]}/pause"' in listed.text

        for prices in ({URLS[0]: 10.5, URLS[1]: 20.0}, {URLS[0]: 9.99, URLS[1]: 20.0}):
            ran = await client.post(f"/ui/monitors/{monitor['id']}/run", headers=HTMX)
            assert ran.status_code == 204
            check_path = ran.headers["HX-Redirect"]
            assert check_path.startswith(f"/ui/monitors/{monitor['id']}/checks/chk_")
            checks = (await client.get(f"/v1/monitors/{monitor['id']}/checks")).json()["checks"]
            await run_job(store, checks[0]["job_id"], prices)

        page = await client.get(check_path)
        assert page.status_code == 200, page.text
        assert "1 changed, 1 same" in page.text
        assert "10.5" in page.text and "9.99" in page.text and "-0.51" in page.text
        assert 'class="removed">Now 10.5' in page.text and 'class="added">Now 9.99' in page.text
        only_same = await client.get(check_path, params={"status": "same"})
        assert URLS[1] in only_same.text and URLS[0] not in only_same.text

        detail = await client.get(f"/ui/monitors/{monitor['id']}")
        assert detail.status_code == 200 and detail.text.count("/checks/chk_") == 2

        paused = await client.post(f"/ui/monitors/{monitor['id']}/pause", headers=HTMX)
        assert paused.status_code == 200 and "shoe prices: paused." in paused.text
        assert f'hx-post="/ui/monitors/{monitor["id"]}/resume"' in paused.text
        assert (await client.get(f"/v1/monitors/{monitor['id']}")).json()["status"] == "paused"
        resumed = await client.post(f"/ui/monitors/{monitor['id']}/resume", headers=HTMX)
        assert "shoe prices: resumed." in resumed.text


async def test_actions_need_htmx_and_unknown_monitors_are_pages() -> None:
    async with memory_client(MemoryJobStore()) as client:
        monitor = (await client.post("/v1/monitors", json=BODY)).json()
        bare = await client.post(f"/ui/monitors/{monitor['id']}/pause")
        assert bare.status_code == 400 and "text/html" in bare.headers["content-type"]
        assert (await client.get(f"/v1/monitors/{monitor['id']}")).json()["status"] == "active"
        unknown = "mon_" + "0" * 32
        missing = await client.get(f"/ui/monitors/{unknown}")
        assert missing.status_code == 404 and "Monitor not found" in missing.text
        check = await client.get(f"/ui/monitors/{monitor['id']}/checks/chk_{'0' * 32}")
        assert check.status_code == 404 and "Check not found" in check.text
        gone = await client.post(f"/ui/monitors/{unknown}/run", headers=HTMX)
        assert gone.status_code == 404


def test_a_unified_diff_side_by_side() -> None:
    rows = side_by_side("--- previous\n+++ current\n@@ -1,3 +1,3 @@\n a\n-b\n-c\n+B\n d")
    assert [(r.previous, r.current, r.removed, r.added) for r in rows] == [
        ("…", "…", False, False),
        ("a", "a", False, False),
        ("b", "B", True, True),
        ("c", "", True, False),
        ("d", "d", False, False),
    ]
