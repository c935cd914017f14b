"""A monitor's webhook events over in-memory adapters: ``monitor.page`` for each page a check
found new, changed (and let through by the rules) or removed, ``monitor.check.completed`` with
its summary, each under an id a comparison done again repeats; none for a page held back or
the same; none for a webhook that does not want them; and Firecrawl's shape of both."""

from __future__ import annotations

import json
from datetime import UTC, datetime, timedelta
from typing import Any

import pytest

from scrapejobs_shared.adapters.memory.job_store import MemoryJobStore
from scrapejobs_shared.adapters.memory.monitor_checks import MemoryMonitorChecks
from scrapejobs_shared.adapters.memory.monitor_store import MemoryMonitorStore
from scrapejobs_shared.adapters.memory.webhooks import MemoryWebhookOutbox
from scrapejobs_shared.domain.batch_transitions import FinishTask
from scrapejobs_shared.domain.records import TaskOutcome
from scrapejobs_shared.domain.statuses import TaskStatus
from scrapejobs_shared.domain.webhook_events import WebhookEvent
from scrapejobs_shared.firecrawl.webhook_bodies import firecrawl_body
from scrapejobs_shared.ports.batch_store import BatchClaim, Claimed
from scrapejobs_shared.ports.dependency_unavailable import PUBSUB, DependencyUnavailable
from support.memory_dispatcher import memory_client

URLS = [f"https://shop.example/p/{n}" for n in range(3)]
HOOK = {"url": "https://hooks.example/in", "secret": "whsec_" + "QUJDREVGR0hJSktMTU5PUA=="}
BODY: dict[str, Any] = {
    "urls": URLS,
    "extract": {"price": {"css": ".price::text", "type": "float"}},
    "name": "prices",
    "schedule": {"text": "hourly"},
    "rules": {"thresholds": {"price": {"relative": 0.05}}},
    "webhook": HOOK,
}

IDLE = {"due": 0, "compared": 0, "failed": 0, "errors": 0, "left": 0}


def fetched(price: float) -> TaskOutcome:
    return TaskOutcome(TaskStatus.SUCCEEDED, 200, {"price": price, "markdown": "# A product"})


async def run_job(store: MemoryJobStore, job_id: str, outcomes: dict[str, TaskOutcome]) -> None:
    now = datetime.now(UTC)
    for batch_id, batch in list(store.batches[job_id].items()):
        claim = await store.claim_batch(
            BatchClaim(job_id, batch_id, now, now + timedelta(seconds=30))
        )
        assert isinstance(claim, Claimed)
        await store.settle(
            claim.handle, [FinishTask(i.task_id, outcomes[i.url]) for i in batch.items], now
        )


class FailingOnce(MemoryWebhookOutbox):
    def __init__(self) -> None:
        super().__init__()
        self.fail = False

    async def publish(self, event: WebhookEvent) -> None:
        if self.fail and event.type == "monitor.check.completed":
            self.fail = False
            raise DependencyUnavailable(PUBSUB, 5.0)
        await super().publish(event)


async def test_pages_that_changed_and_the_checks_end_are_announced_once() -> None:
    store, outbox, checks = MemoryJobStore(), FailingOnce(), MemoryMonitorChecks()
    adapters = {"monitor_checks": checks, "monitor_store": MemoryMonitorStore(checks)}
    async with memory_client(store, webhook_outbox=outbox, **adapters) as api:
        monitor = (await api.post("/v1/monitors", json=BODY)).json()
        assert monitor["webhook"]["events"] == ["monitor.page", "monitor.check.completed"]
        path = f"/v1/monitors/{monitor['id']}"
        first = (await api.post(f"{path}:run")).json()
        assert store.jobs[first["job_id"]].spec.webhook is not None
        await run_job(store, first["job_id"], {u: fetched(10.0) for u in URLS})
        await api.get(f"{path}/checks/{first['id']}")
        kinds = [(e.type, e.data.get("status")) for e in outbox.events]
        assert (
            sorted(kinds)
            == [("monitor.check.completed", "completed")] + [("monitor.page", "new")] * 3
        )
        assert {e.job_id for e in outbox.events} == {first["job_id"]}

        outbox.events.clear()
        second = (await api.post(f"{path}:run")).json()
        outcomes = {
            URLS[0]: fetched(8.0),  # -20%: notified
            URLS[1]: fetched(10.2),  # +2%: under the threshold, held back
            URLS[2]: TaskOutcome(TaskStatus.FAILED, 404, error="HTTP 404"),  # removed
        }
        await run_job(store, second["job_id"], outcomes)
        outbox.fail = True
        failed = await api.get(f"{path}/checks/{second['id']}")
        assert failed.status_code == 503, failed.text  # its end not queued: compared again
        announced = list(outbox.events)
        assert {(e.type, e.data["url"]) for e in announced} == {
            ("monitor.page", URLS[0]),
            ("monitor.page", URLS[2]),
        }
        changed = next(e for e in announced if e.data["url"] == URLS[0])
        assert changed.data["diff"]["fields"]["price"] == {
            "previous": 10.0,
            "current": 8.0,
            "change": -2.0,
            "change_pct": -20.0,
        }
        # its lease lapses; the next read compares again: the same events, the same ids
        checks.leases.clear()
        done = (await api.get(f"{path}/checks/{second['id']}")).json()
        assert done["status"] == "completed"
        again = outbox.events[len(announced) :]
        assert [e.id for e in again if e.type == "monitor.page"] == [
            e.id for e in announced if e.type == "monitor.page"
        ]
        [end] = [e for e in again if e.type == "monitor.check.completed"]
        assert end.data["summary"] == {
            "total": 3,
            "same": 0,
            "new": 0,
            "changed": 2,
            "removed": 1,
            "error": 0,
        }


async def test_the_tick_compares_an_ended_check_nobody_reads() -> None:
    store, outbox = MemoryJobStore(), MemoryWebhookOutbox()
    async with memory_client(store, webhook_outbox=outbox) as api:
        monitor = (await api.post("/v1/monitors", json=BODY)).json()
        check = (await api.post(f"/v1/monitors/{monitor['id']}:run")).json()
        running = await api.post("/v1/maintenance/monitors")
        assert running.json() == IDLE  # its job has not ended
        await run_job(store, check["job_id"], {u: fetched(1.0) for u in URLS})
        tick = await api.post("/v1/maintenance/monitors")
        assert tick.json() == IDLE | {"compared": 1}
        assert (
            sorted(e.type for e in outbox.events)
            == ["monitor.check.completed"] + ["monitor.page"] * 3
        )
        assert (await api.post("/v1/maintenance/monitors")).json()["compared"] == 0
        done = (await api.get(f"/v1/monitors/{monitor['id']}/checks/{check['id']}")).json()
        assert done["status"] == "completed" and len(outbox.events) == 4


async def test_a_webhook_that_wants_only_the_end_gets_only_the_end() -> None:
    store, outbox = MemoryJobStore(), MemoryWebhookOutbox()
    body = BODY | {"webhook": HOOK | {"events": ["monitor.check.completed"]}}
    async with memory_client(store, webhook_outbox=outbox) as api:
        monitor = (await api.post("/v1/monitors", json=body)).json()
        check = (await api.post(f"/v1/monitors/{monitor['id']}:run")).json()
        await run_job(store, check["job_id"], {u: fetched(1.0) for u in URLS})
        await api.get(f"/v1/monitors/{monitor['id']}/checks/{check['id']}")
        assert [e.type for e in outbox.events] == ["monitor.check.completed"]


@pytest.mark.parametrize("kind", ["monitor.page", "monitor.check.completed"])
async def test_firecrawl_shaped_monitor_events(kind: str) -> None:
    store, outbox = MemoryJobStore(), MemoryWebhookOutbox()
    async with memory_client(store, webhook_outbox=outbox) as api:
        monitor = (await api.post("/v1/monitors", json=BODY)).json()
        check = (await api.post(f"/v1/monitors/{monitor['id']}:run")).json()
        await run_job(store, check["job_id"], {u: fetched(1.0) for u in URLS})
        await api.get(f"/v1/monitors/{monitor['id']}/checks/{check['id']}")
    event = next(e for e in outbox.events if e.type == kind)
    body = json.loads(firecrawl_body(event, crawl=False, metadata={"team": "a"}, page=None))
    assert body["type"] == kind and body["id"] == monitor["id"] and body["success"]
    assert body["metadata"] == {"team": "a"}
    [data] = body["data"]
    if kind == "monitor.page":
        assert data["status"] == "new" and data["url"] in URLS and data["targetId"]
        assert data["statusCode"] == 200 and data["createdAt"]
    else:
        assert data["monitorId"] == monitor["id"] and data["summary"]["totalPages"] == 3
        assert data["billingStatus"] == "not_applicable" and data["status"] == "completed"
