"""POST /v1/scrape over in-memory adapters: a one-URL job, waited for."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from datetime import UTC, datetime, timedelta

import httpx
import pytest

from scrapejobs_dispatcher.settings import DispatcherSettings
from scrapejobs_shared.adapters.memory.host_gate import MemoryHostGate
from scrapejobs_shared.adapters.memory.job_store import MemoryJobStore
from scrapejobs_shared.adapters.memory.publisher import MemoryTaskPublisher
from scrapejobs_shared.domain.batch_transitions import FinishTask
from scrapejobs_shared.domain.records import TaskOutcome
from scrapejobs_shared.domain.statuses import JobStatus, TaskStatus
from scrapejobs_shared.ports.batch_store import BatchClaim, Claimed
from support.memory_dispatcher import memory_dispatcher


@pytest.fixture
def store() -> MemoryJobStore:
    return MemoryJobStore()


@pytest.fixture
def publisher() -> MemoryTaskPublisher:
    return MemoryTaskPublisher()


@pytest.fixture
async def client(store, publisher) -> AsyncIterator[httpx.AsyncClient]:
    settings = DispatcherSettings(auth_mode="none")
    app = memory_dispatcher(store, settings, publisher=publisher, gate=MemoryHostGate())
    async with app.router.lifespan_context(app):
        transport = httpx.ASGITransport(app=app)
        async with httpx.AsyncClient(transport=transport, base_url="http://test") as client:
            yield client


async def work_like_a_worker(store: MemoryJobStore, publisher: MemoryTaskPublisher) -> None:
    """Take the published batch, store its result, complete the job."""
    while not publisher.published:
        await asyncio.sleep(0.005)
    [(message, _)] = publisher.batches
    now = datetime.now(UTC)
    claim = await store.claim_batch(
        BatchClaim(message.job_id, message.batch_id, now, now + timedelta(seconds=30))
    )
    assert isinstance(claim, Claimed)
    outcome = TaskOutcome(TaskStatus.SUCCEEDED, http_status=200, data={"title": "Hello"})
    await store.settle(claim.handle, [FinishTask(message.tasks[0].id, outcome)], now)
    await store.set_job_status(message.job_id, JobStatus.COMPLETED, now)


async def test_a_scrape_answers_with_the_pages_result(client, store, publisher) -> None:
    worker = asyncio.create_task(work_like_a_worker(store, publisher))
    body = {"url": "http://shop.example/p/1", "extract": {"title": {"css": "h1::text"}}}
    response = await client.post("/v1/scrape", json=body)
    await worker
    assert response.status_code == 200, response.text
    answer = response.json()
    assert answer["status"] == "completed"
    assert answer["result"]["url"] == "http://shop.example/p/1"
    assert answer["result"]["status"] == "succeeded"
    assert answer["result"]["data"] == {"title": "Hello"}
    job = (await client.get(f"/v1/jobs/{answer['job_id']}")).json()  # an ordinary job
    assert job["total"] == 1 and job["counts"]["succeeded"] == 1


async def test_no_result_in_time_is_a_202_naming_the_job_which_goes_on(
    client, store, publisher
) -> None:
    response = await client.post(
        "/v1/scrape", json={"url": "http://slow.example/", "timeout_s": 0.1}
    )
    assert response.status_code == 202
    error = response.json()
    assert error["job_id"] and "no result within 0.1 s" in error["message"]
    assert response.headers["location"] == f"/v1/jobs/{error['job_id']}"
    assert len(publisher.batches) == 1  # the job was queued and stays so
    job = await client.get(f"/v1/jobs/{error['job_id']}")
    assert job.status_code == 200 and job.json()["counts"]["queued"] == 1
    await work_like_a_worker(store, publisher)
    results = (await client.get(f"/v1/jobs/{error['job_id']}/results")).json()["results"]
    assert [r["status"] for r in results] == ["succeeded"]


@pytest.mark.parametrize(
    ("body", "field"),
    [
        ({}, "url"),
        ({"url": "ftp://a.example/"}, "url"),
        ({"url": "http://a.example/", "urls": ["http://a.example/"]}, "urls"),
        ({"url": "http://a.example/", "timeout_s": 0}, "timeout_s"),
        ({"url": "http://a.example/", "timeout_s": 301}, "timeout_s"),
        ({"url": "http://a.example/", "timeout_s": "5"}, "timeout_s"),
        ({"url": "http://a.example/", "extract": {"t": {"css": "h1::text", "x": 1}}}, "extract"),
        ({"url": "http://a.example/", "options": {"per_host_concurrency": 0}}, "options"),
    ],
)
async def test_bad_input_is_a_422_naming_the_field(client, publisher, body, field) -> None:
    response = await client.post("/v1/scrape", json=body)
    assert response.status_code == 422, response.text
    assert response.json()["error"]["field"].startswith(field)
    assert publisher.batches == []


async def test_the_openapi_document_describes_the_scrape_and_its_202(client) -> None:
    spec = (await client.get("/openapi.json")).json()
    operation = spec["paths"]["/v1/scrape"]["post"]
    assert {"200", "202", "422"} <= set(operation["responses"])
    body = operation["requestBody"]["content"]["application/json"]["schema"]["$ref"]
    assert body.endswith("/ScrapeRequest")


async def test_the_service_caps_the_wait_below_the_platforms_request_timeout(store) -> None:
    settings = DispatcherSettings(auth_mode="none", scrape_max_wait_s=0.05)
    app = memory_dispatcher(store, settings, publisher=MemoryTaskPublisher())
    async with app.router.lifespan_context(app):
        transport = httpx.ASGITransport(app=app)
        async with httpx.AsyncClient(transport=transport, base_url="http://test") as client:
            response = await client.post(
                "/v1/scrape", json={"url": "http://a.example/", "timeout_s": 300}
            )
    assert response.status_code == 202
    assert "no result within 0.05 s" in response.json()["message"]
