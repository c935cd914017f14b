"""Stats, history and health on the real stack: a known workload counted exactly, history that
outlives both services, and health that sees an unreachable Firestore."""

from __future__ import annotations

import time
from datetime import datetime
from typing import Any

import httpx
import pytest
from google.cloud import firestore

from scrapejobs_devstack.processes import free_port
from scrapejobs_dispatcher.settings import DispatcherSettings
from scrapejobs_shared.adapters.firestore.outcome_stats import FirestoreStats
from scrapejobs_shared.adapters.memory.job_store import MemoryJobStore
from support.jobs import PRODUCT_FIELDS, stats_when, steady_async, submit, wait_finished
from support.memory_dispatcher import memory_dispatcher

pytestmark = [pytest.mark.emulators, pytest.mark.stack]
FINISHED = ("succeeded", "failed", "dead_lettered", "cancelled")


async def finished_counts(api: httpx.AsyncClient) -> dict[str, int]:
    stats = (await api.get("/v1/stats", params={"window": "24h"})).json()
    return {status: stats["tasks"][status] for status in FINISHED}


async def quiet_counts(api: httpx.AsyncClient) -> dict[str, int]:
    """The finished counts once earlier tests' retries have stopped adding to them."""
    return await steady_async(lambda: finished_counts(api), timeout_s=60)


async def test_stats_count_a_known_workload_exactly(api, site) -> None:
    before = await quiet_counts(api)
    started = time.monotonic()
    urls = [f"{site.url}/product/{n}" for n in range(300, 306)]  # 6 succeed
    urls += [f"{site.url}/status/404/monitor-{n}" for n in range(3)]  # 3 fail (404)
    urls += [f"{site.url}/switch/monitor-dead"]  # 1 dead-letters (500 until switched on)
    job = await submit(api, {"urls": urls, "extract": PRODUCT_FIELDS})
    final = await wait_finished(api, job["id"], timeout_s=120)
    assert final["counts"]["dead_lettered"] == 1
    wall_s = time.monotonic() - started

    after = await quiet_counts(api)
    delta = {status: after[status] - before[status] for status in FINISHED}
    assert delta == {"succeeded": 6, "failed": 3, "dead_lettered": 1, "cancelled": 0}

    stats = (await api.get("/v1/stats", params={"window": "5m"})).json()
    tasks = stats["tasks"]
    processed = tasks["succeeded"] + tasks["failed"] + tasks["dead_lettered"]
    assert processed >= 10
    assert stats["error_rate"] == round((tasks["failed"] + tasks["dead_lettered"]) / processed, 4)
    span_s = (
        datetime.fromisoformat(stats["generated_at"]) - datetime.fromisoformat(stats["since"])
    ).total_seconds()
    assert stats["throughput_per_s"] == pytest.approx(processed / span_s, rel=0.05, abs=0.002)
    assert stats["throughput_per_s"] >= 10 / max(span_s, wall_s) * 0.9
    assert stats["processing"]["p95_ms"] >= stats["processing"]["p50_ms"] > 0
    assert stats["fetch"]["p95_ms"] > 0
    assert set(stats["jobs"]) >= {"queued", "running", "completed", "cancelled"}


async def test_history_outlives_both_services(api, site, stack) -> None:
    job = await submit(api, {"urls": [f"{site.url}/product/{n}" for n in range(310, 314)]})
    await wait_finished(api, job["id"])

    async def history() -> list[dict[str, Any]]:
        answer: dict[str, Any] = (await api.get("/v1/stats/history", params={"hours": 2})).json()
        return list(answer["history"])

    before = await stats_when(history, lambda rows: sum(r["processed"] for r in rows) >= 4)
    # the job's hour, and the one before (an hour may begin while the test runs: sums, by hour)
    assert len(before) == 2 and sum(row["processed"] for row in before) >= 4

    assert stack.dispatcher is not None and stack.worker is not None
    stack.dispatcher.stop()
    stack.worker.stop()
    stack.start_worker()
    stack.start_dispatcher()

    after = (await api.get("/v1/stats/history", params={"hours": 3})).json()["history"]
    kept = {row["hour"]: row for row in after}
    assert {row["hour"] for row in before} <= set(kept)  # every hour read before is still there
    for row in before:
        assert kept[row["hour"]]["processed"] >= row["processed"]
        assert kept[row["hour"]]["succeeded"] >= row["succeeded"]
    assert sum(kept[row["hour"]]["succeeded"] for row in before) >= 4
    too_far = await api.get("/v1/stats/history", params={"hours": 169})
    assert too_far.status_code == 422


async def test_health_reports_every_check(api) -> None:
    response = await api.get("/v1/health")
    body = response.json()
    assert response.status_code == (503 if body["status"] == "UNHEALTHY" else 200)
    assert body["checks"]["firestore"]["status"] == "healthy"
    assert body["checks"]["pubsub"]["status"] == "healthy"
    assert set(body["checks"]) >= {
        "error_rate",
        "backlog",
        "dead_letters",
        "stuck_work",
        "breakers",
    }
    assert (await api.get("/healthz")).json() == {"status": "ok"}  # plain liveness


async def test_an_unreachable_firestore_is_unhealthy(stack, monkeypatch) -> None:
    monkeypatch.setenv("FIRESTORE_EMULATOR_HOST", f"127.0.0.1:{free_port()}")  # nothing listens
    client = firestore.AsyncClient(project=stack.config.project_id)
    store = MemoryJobStore()
    app = memory_dispatcher(
        store, DispatcherSettings(auth_mode="none"), stats_reader=FirestoreStats(client)
    )
    async with app.router.lifespan_context(app):
        transport = httpx.ASGITransport(app=app)
        async with httpx.AsyncClient(transport=transport, base_url="http://test") as dispatcher:
            response = await dispatcher.get("/v1/health")
    client.close()
    body: dict[str, Any] = response.json()
    assert response.status_code == 503 and body["status"] == "UNHEALTHY"
    assert body["reasons"][0].startswith("Firestore unreachable")
    assert body["checks"]["backlog"]["status"] == "skipped"
