"""The dispatcher counts the jobs and tasks it accepts (duplicates of a trigger are not new)."""

from __future__ import annotations

import httpx
from opentelemetry.sdk.metrics.export import InMemoryMetricReader

from scrapejobs_dispatcher.settings import DispatcherSettings
from scrapejobs_shared.adapters.memory.job_store import MemoryJobStore
from scrapejobs_shared.observability.telemetry import telemetry_with
from support.memory_dispatcher import memory_dispatcher

FIELDS = {"h": {"css": "h1::text"}}


async def test_submitted_jobs_and_tasks_are_counted() -> None:
    reader = InMemoryMetricReader()
    telemetry = telemetry_with("scrapejobs-dispatcher", metric_readers=[reader])
    store = MemoryJobStore()
    app = memory_dispatcher(store, DispatcherSettings(auth_mode="none"), telemetry=telemetry)
    async with (
        app.router.lifespan_context(app),
        httpx.AsyncClient(transport=httpx.ASGITransport(app=app), base_url="http://d") as api,
    ):
        urls = [f"https://a.example/{n}" for n in range(3)]
        assert (await api.post("/v1/jobs", json={"urls": urls, "extract": FIELDS})).is_success
        crawl = {"crawl": {"start_url": "https://b.example/"}, "extract": FIELDS}
        assert (await api.post("/v1/jobs", json=crawl)).is_success
    data = reader.get_metrics_data()
    assert data is not None
    values = {
        (metric.name, point.attributes["scrapejobs.job.kind"]): point.value
        for resource in data.resource_metrics
        for scope in resource.scope_metrics
        for metric in scope.metrics
        for point in metric.data.data_points
        if point.attributes
    }
    assert values == {
        ("scrapejobs.submitted.jobs", "urls"): 1,
        ("scrapejobs.submitted.tasks", "urls"): 3,
        ("scrapejobs.submitted.jobs", "crawl"): 1,
        ("scrapejobs.submitted.tasks", "crawl"): 1,
    }
    telemetry.shutdown()
