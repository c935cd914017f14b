"""A check of a monitor of listed URLs over in-memory adapters: its job asks for each page
with the validators the last check kept; a page its job found unchanged is ``same`` with no
result, no page document and no snapshot write of its own; pages that are not ``same`` are
listed first."""

from __future__ import annotations

import dataclasses
from datetime import UTC, datetime, timedelta
from typing import Any

from scrapejobs_dispatcher.settings import DispatcherSettings
from scrapejobs_shared.adapters.memory.job_store import MemoryJobStore
from scrapejobs_shared.adapters.memory.monitor_checks import MemoryMonitorChecks
from scrapejobs_shared.adapters.memory.monitor_store import MemoryMonitorStore
from scrapejobs_shared.delivery.completion import complete_if_done
from scrapejobs_shared.domain.batch_transitions import FinishTask
from scrapejobs_shared.domain.monitor_checks import page_key
from scrapejobs_shared.domain.page_validators import PageValidators
from scrapejobs_shared.domain.records import TaskOutcome
from scrapejobs_shared.domain.statuses import TaskStatus
from scrapejobs_shared.ports.batch_store import BatchClaim, Claimed
from support.memory_dispatcher import memory_client

URLS = [f"https://shop.example/p/{n}" for n in range(4)]
BODY: dict[str, Any] = {
    "urls": URLS,
    "extract": {"price": {"css": ".price::text", "type": "float"}},
    "name": "prices",
    "schedule": {"text": "hourly"},
}


def fetched(price: float, etag: str) -> TaskOutcome:
    data = {"price": price, "markdown": f"# Price\n\n{price}"}
    return TaskOutcome(
        TaskStatus.SUCCEEDED, 200, data, validators=PageValidators(etag=etag, digest=etag * 8)
    )


UNCHANGED = TaskOutcome(TaskStatus.SUCCEEDED, 304, unchanged=True)


async def run_job(store: MemoryJobStore, job_id: str, outcomes: dict[str, TaskOutcome]) -> None:
    """What the workers do: each page of the job ends with its URL's outcome."""
    now = datetime.now(UTC)
    for batch_id, batch in list(store.batches[job_id].items()):
        claim = await store.claim_batch(
            BatchClaim(job_id, batch_id, now, now + timedelta(seconds=30))
        )
        assert isinstance(claim, Claimed)
        changes = [FinishTask(i.task_id, outcomes[i.url]) for i in batch.items]
        await store.settle(claim.handle, changes, now)
    await complete_if_done(store, job_id, lambda: now)


async def test_unchanged_pages_cost_no_writes_of_their_own() -> None:
    store, checks = MemoryJobStore(), MemoryMonitorChecks()
    monitors = MemoryMonitorStore(checks)
    async with memory_client(store, monitor_store=monitors, monitor_checks=checks) as api:
        monitor = (await api.post("/v1/monitors", json=BODY)).json()
        path = f"/v1/monitors/{monitor['id']}"
        first = (await api.post(f"{path}:run")).json()
        await run_job(
            store, first["job_id"], {u: fetched(10.0, f"e{n}") for n, u in enumerate(URLS)}
        )
        done = (await api.get(f"{path}/checks/{first['id']}")).json()
        assert done["status"] == "completed" and done["summary"]["new"] == 4

        second = (await api.post(f"{path}:run")).json()
        items = [i for b in store.batches[second["job_id"]].values() for i in b.items]
        assert {i.url: i.validators.etag for i in items if i.validators} == {
            u: f"e{n}" for n, u in enumerate(URLS)
        }
        assert store.jobs[second["job_id"]].spec.conditional
        outcomes = {
            URLS[0]: UNCHANGED,  # 304
            URLS[1]: fetched(10.0, "e1"),  # fetched in full, found as it was
            URLS[2]: fetched(9.5, "x2"),  # changed
            URLS[3]: UNCHANGED,
        }
        await run_job(store, second["job_id"], outcomes)
        assert {r.url for r in store.results[second["job_id"]].values()} == {URLS[1], URLS[2]}
        check = (await api.get(f"{path}/checks/{second['id']}")).json()
        assert check["status"] == "completed"
        assert check["summary"] == {
            "total": 4,
            "same": 3,
            "changed": 1,
            "new": 0,
            "removed": 0,
            "error": 0,
        }
        snapshots = checks.page_snapshots[monitor["id"]]
        assert snapshots[page_key(URLS[2])].written_by == second["id"]
        for url in (URLS[0], URLS[1], URLS[3]):  # found as they were: not written again
            assert snapshots[page_key(url)].written_by == first["id"]

        listed = (await api.get(f"{path}/checks/{second['id']}/pages")).json()
        statuses = [(p["url"], p["status"]) for p in listed["pages"]]
        assert statuses[0] == (URLS[2], "changed")
        assert sorted(statuses[1:]) == [(u, "same") for u in (URLS[0], URLS[1], URLS[3])]
        paged = await api.get(
            f"{path}/checks/{second['id']}/pages", params={"status": "same", "page_size": 2}
        )
        rest = await api.get(
            f"{path}/checks/{second['id']}/pages",
            params={
                "status": "same",
                "page_size": 2,
                "page_token": paged.json()["next_page_token"],
            },
        )
        both = paged.json()["pages"] + rest.json()["pages"]
        assert sorted(p["url"] for p in both) == [URLS[0], URLS[1], URLS[3]]


async def test_pages_gone_from_the_targets_are_removed_without_reading_every_snapshot() -> None:
    store, checks = MemoryJobStore(), MemoryMonitorChecks()
    monitors = MemoryMonitorStore(checks)
    async with memory_client(store, monitor_store=monitors, monitor_checks=checks) as api:
        monitor = (await api.post("/v1/monitors", json=BODY)).json()
        path = f"/v1/monitors/{monitor['id']}"
        first = (await api.post(f"{path}:run")).json()
        await run_job(
            store, first["job_id"], {u: fetched(1.0, f"e{n}") for n, u in enumerate(URLS)}
        )
        await api.get(f"{path}/checks/{first['id']}")
        record = monitors.monitors[monitor["id"]]  # its targets narrowed (as a store would)
        narrowed = record.request.model_copy(update={"urls": URLS[:2]})
        monitors.monitors[monitor["id"]] = dataclasses.replace(record, request=narrowed)

        second = (await api.post(f"{path}:run")).json()
        assert sorted(checks.checks[(monitor["id"], second["id"])].departed or ()) == URLS[2:]
        await run_job(store, second["job_id"], {u: UNCHANGED for u in URLS[:2]})
        reads = checks.entries_read
        done = (await api.get(f"{path}/checks/{second['id']}")).json()
        assert checks.entries_read == reads  # the start's read served the comparison
        assert done["summary"] == {
            "total": 4,
            "same": 2,
            "removed": 2,
            "new": 0,
            "changed": 0,
            "error": 0,
        }
        gone = await api.get(f"{path}/checks/{second['id']}/pages", params={"status": "removed"})
        assert sorted(p["url"] for p in gone.json()["pages"]) == URLS[2:]


async def test_a_check_of_pages_seen_before_travels_in_the_largest_batches() -> None:
    store = MemoryJobStore()
    urls = [f"https://shop.example/p/{n}" for n in range(150)]
    async with memory_client(store) as api:
        monitor = (await api.post("/v1/monitors", json=BODY | {"urls": urls})).json()
        path = f"/v1/monitors/{monitor['id']}"
        first = (await api.post(f"{path}:run")).json()
        assert len(store.batches[first["job_id"]]) == 2  # new pages: the usual batches
        await run_job(store, first["job_id"], {u: fetched(1.0, "e") for u in urls})
        await api.get(f"{path}/checks/{first['id']}")
        second = (await api.post(f"{path}:run")).json()
        assert len(store.batches[second["job_id"]]) == 1  # mostly 304s: one message


async def test_a_monitor_of_ten_thousand_urls() -> None:
    """A job's most URLs: compared a hundred results at a time; its second check, every page
    unchanged, keeps no page document and no snapshot write of its own."""
    store, checks = MemoryJobStore(), MemoryMonitorChecks()
    monitors = MemoryMonitorStore(checks)
    urls = [f"https://shop{n % 50}.example/p/{n}" for n in range(10_000)]
    settings = DispatcherSettings(auth_mode="none", dashboard_cache_s=0, monitor_max_pages=10_000)
    async with memory_client(store, settings, monitor_store=monitors, monitor_checks=checks) as api:
        monitor = (await api.post("/v1/monitors", json=BODY | {"urls": urls})).json()
        path = f"/v1/monitors/{monitor['id']}"
        first = (await api.post(f"{path}:run")).json()
        await run_job(store, first["job_id"], {u: fetched(1.0, "e") for u in urls})
        done = (await api.get(f"{path}/checks/{first['id']}")).json()
        assert done["status"] == "completed" and done["summary"]["new"] == 10_000
        second = (await api.post(f"{path}:run")).json()
        await run_job(store, second["job_id"], dict.fromkeys(urls, UNCHANGED))
        again = (await api.get(f"{path}/checks/{second['id']}")).json()
        assert again["summary"]["same"] == 10_000 and again["summary"]["total"] == 10_000
        assert store.results[second["job_id"]] == {}
        kept = checks.page_snapshots[monitor["id"]].values()
        assert {s.written_by for s in kept} == {first["id"]}
