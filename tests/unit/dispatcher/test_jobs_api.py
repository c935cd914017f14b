"""The dispatcher's REST API over in-memory adapters."""

from __future__ import annotations

import base64
from collections.abc import AsyncIterator
from datetime import UTC, datetime, timedelta

import httpx
import pytest

from scrapejobs_dispatcher.settings import DispatcherSettings
from scrapejobs_shared.adapters.memory.host_gate import MemoryHostGate
from scrapejobs_shared.adapters.memory.job_store import MemoryJobStore
from scrapejobs_shared.adapters.memory.publisher import MemoryTaskPublisher
from scrapejobs_shared.domain.batch_transitions import FinishTask
from scrapejobs_shared.domain.jobspec import JobSpec
from scrapejobs_shared.domain.records import BatchItem, BatchRecord, JobRecord, TaskOutcome
from scrapejobs_shared.domain.statuses import JobStatus, TaskStatus
from scrapejobs_shared.ports.batch_store import BatchClaim, Claimed
from support.memory_dispatcher import memory_dispatcher


def memory_app(
    settings: DispatcherSettings,
    store: MemoryJobStore,
    publisher: MemoryTaskPublisher,
    gate: MemoryHostGate | None = None,
):
    """The dispatcher over in-memory adapters."""
    return memory_dispatcher(store, settings, publisher=publisher, gate=gate or MemoryHostGate())


@pytest.fixture
def store() -> MemoryJobStore:
    return MemoryJobStore()


@pytest.fixture
def publisher() -> MemoryTaskPublisher:
    return MemoryTaskPublisher()


@pytest.fixture
async def client(store, publisher) -> AsyncIterator[httpx.AsyncClient]:
    app = memory_app(DispatcherSettings(auth_mode="none"), store, publisher)
    async with app.router.lifespan_context(app):
        transport = httpx.ASGITransport(app=app)
        async with httpx.AsyncClient(transport=transport, base_url="http://test") as client:
            yield client


async def test_submit_get_results_and_cancel(client, store, publisher) -> None:
    urls = [f"http://shop.example/p/{n}" for n in range(5)]
    response = await client.post("/v1/jobs", json={"urls": urls, "labels": {"team": "a"}})
    assert response.status_code == 202
    job = response.json()
    assert response.headers["location"] == f"/v1/jobs/{job['id']}"
    assert job["status"] == "queued" and job["total"] == 5 and job["counts"]["queued"] == 5
    [(message, _)] = publisher.batches  # one batch: 5 URLs of one host
    assert sorted(t.url for t in message.tasks) == sorted(urls) and message.job_id == job["id"]

    detail = (await client.get(f"/v1/jobs/{job['id']}")).json()
    assert detail["counts"] == {s.value: (5 if s is TaskStatus.QUEUED else 0) for s in TaskStatus}
    assert (await client.get(f"/v1/jobs/{job['id']}/results")).json()["results"] == []
    await _finish_all(store, job["id"], message.batch_id)

    first = (await client.get(f"/v1/jobs/{job['id']}/results", params={"page_size": 2})).json()
    assert len(first["results"]) == 2 and first["next_page_token"]
    rest = (
        await client.get(
            f"/v1/jobs/{job['id']}/results",
            params={"page_size": 10, "page_token": first["next_page_token"]},
        )
    ).json()
    assert rest["next_page_token"] is None
    seen = [r["url"] for r in first["results"] + rest["results"]]
    assert sorted(seen) == sorted(urls)

    done = (await client.get(f"/v1/jobs/{job['id']}")).json()
    assert done["counts"]["succeeded"] == 5 and done["counts"]["queued"] == 0


async def _finish_all(store: MemoryJobStore, job_id: str, batch_id: str) -> None:
    now = datetime.now(UTC)
    claim = await store.claim_batch(BatchClaim(job_id, batch_id, now, now + timedelta(seconds=30)))
    assert isinstance(claim, Claimed)
    ok = TaskOutcome(TaskStatus.SUCCEEDED, http_status=200)
    await store.settle(claim.handle, [FinishTask(i.task_id, ok) for i in claim.batch.items], now)


async def test_cancel(client) -> None:
    job = (await client.post("/v1/jobs", json={"url": "http://a.example/"})).json()
    cancelled = await client.post(f"/v1/jobs/{job['id']}:cancel")
    assert cancelled.status_code == 200 and cancelled.json()["status"] == "cancelled"


async def test_urls_are_batched_by_host(store, publisher) -> None:
    settings = DispatcherSettings(auth_mode="none", batch_size=3)
    app = memory_app(settings, store, publisher)
    urls = [f"http://{host}.example/{n}" for n in range(4) for host in ("a", "b")]
    async with app.router.lifespan_context(app):
        transport = httpx.ASGITransport(app=app)
        async with httpx.AsyncClient(transport=transport, base_url="http://t") as client:
            assert (await client.post("/v1/jobs", json={"urls": urls})).status_code == 202
    batches = [[t.url for t in m.tasks] for m, _ in publisher.batches]
    assert [len(b) for b in batches] == [3, 3, 2]  # ceil(8 / 3) messages
    assert batches[0] == [f"http://a.example/{n}" for n in range(3)]
    assert sorted(u for b in batches for u in b) == sorted(urls)


async def test_trace_context_travels_with_messages(client, publisher) -> None:
    await client.post("/v1/jobs", json={"url": "http://a.example/"})
    [(_, attributes)] = publisher.batches
    assert attributes["traceparent"].startswith("00-")


async def test_unpublishable_tasks_are_failed_not_lost(store) -> None:
    app = memory_app(  # every batch published at once (no host window): the third fails too
        DispatcherSettings(auth_mode="none", batch_size=1, host_window_batches=0),
        store,
        MemoryTaskPublisher(1),
        gate=MemoryHostGate(),
    )
    async with app.router.lifespan_context(app):
        transport = httpx.ASGITransport(app=app)
        async with httpx.AsyncClient(transport=transport, base_url="http://t") as client:
            body = {"urls": ["http://a.example/1", "http://a.example/2", "http://a.example/3"]}
            job = (await client.post("/v1/jobs", json=body)).json()
            assert job["counts"]["queued"] == 1 and job["counts"]["failed"] == 2
            results = (await client.get(f"/v1/jobs/{job['id']}/results")).json()["results"]
            failed = [r for r in results if r["status"] == "failed"]
            assert len(failed) == 2 and all("publish_failed" in r["error"] for r in failed)


async def test_errors_are_json_with_status(client, store) -> None:
    assert (await client.get("/v1/jobs/missing")).json()["error"]["code"] == "not_found"
    bad = await client.post("/v1/jobs", json={"urls": ["http://a.example/", "gopher://x"]})
    assert bad.status_code == 422
    assert bad.json()["error"] == {
        "code": "invalid_request",
        "message": "urls[1]: URL scheme must be http or https, got 'gopher'",
        "field": "urls[1]",
    }
    not_json = await client.post(
        "/v1/jobs", content=b"{", headers={"content-type": "application/json"}
    )
    assert not_json.status_code == 422 and not_json.json()["error"]["code"] == "invalid_request"
    assert store.jobs == {}


async def test_cancel_of_completed_job_conflicts(client, store) -> None:
    from datetime import UTC, datetime

    from scrapejobs_shared.domain.statuses import JobStatus

    job = (await client.post("/v1/jobs", json={"url": "http://a.example/"})).json()
    await store.set_job_status(job["id"], JobStatus.COMPLETED, datetime.now(UTC))
    response = await client.post(f"/v1/jobs/{job['id']}:cancel")
    assert response.status_code == 409 and response.json()["error"]["code"] == "job_finished"


async def test_openapi_and_health(client) -> None:
    assert (await client.get("/healthz")).json() == {"status": "ok"}
    spec = (await client.get("/openapi.json")).json()
    assert "/v1/jobs" in spec["paths"] and "/v1/jobs/{job_id}:cancel" in spec["paths"]


async def test_host_state_shows_an_open_breaker(store, publisher) -> None:
    from datetime import UTC, datetime

    from scrapejobs_shared.politeness.host_gate import BreakerPolicy

    gate = MemoryHostGate()
    for _ in range(2):
        await gate.record_failure(
            "https~shop.example~443", BreakerPolicy(2, 600), datetime.now(UTC)
        )
    app = memory_app(DispatcherSettings(auth_mode="none"), store, publisher, gate=gate)
    async with app.router.lifespan_context(app):
        transport = httpx.ASGITransport(app=app)
        async with httpx.AsyncClient(transport=transport, base_url="http://t") as client:
            state = (await client.get("/v1/hosts", params={"url": "https://shop.example/x"})).json()
            assert state["host"] == "https://shop.example" and state["paused"] is True
            assert state["circuit_open_until"] and state["in_flight"] == 0
            bad = await client.get("/v1/hosts", params={"url": "ftp://x"})
            assert bad.status_code == 422


async def test_auth_modes(store, publisher) -> None:
    from scrapejobs_dispatcher.tenants.api_keys import hash_api_key

    settings = DispatcherSettings(auth_mode="api_key", api_key_hashes=hash_api_key("sj_secret"))
    app = memory_app(settings, store, publisher)
    async with app.router.lifespan_context(app):
        transport = httpx.ASGITransport(app=app)
        async with httpx.AsyncClient(transport=transport, base_url="http://t") as client:
            assert (await client.get("/v1/jobs")).status_code == 401
            wrong = await client.get("/v1/jobs", headers={"X-API-Key": "sj_wrong"})
            assert wrong.status_code == 401 and wrong.json()["error"]["code"] == "unauthenticated"
            assert (
                await client.get("/v1/jobs", headers={"X-API-Key": "sj_secret"})
            ).status_code == 200
            assert (await client.get("/healthz")).status_code == 200
    iam = memory_app(DispatcherSettings(), store, publisher)
    async with iam.router.lifespan_context(iam):
        transport = httpx.ASGITransport(app=iam)
        async with httpx.AsyncClient(transport=transport, base_url="http://t") as client:
            assert (await client.get("/v1/jobs")).status_code == 401
            claims = base64.urlsafe_b64encode(b'{"email": "someone@example.com"}').decode()
            token = {"Authorization": f"Bearer header.{claims}.SIGNATURE_REMOVED_BY_GOOGLE"}
            assert (await client.get("/v1/jobs", headers=token)).status_code == 200
            nameless = {"Authorization": "Bearer header.payload.SIGNATURE_REMOVED_BY_GOOGLE"}
            assert (await client.get("/v1/jobs", headers=nameless)).status_code == 401
            iap = {"X-Serverless-Authorization": f"Bearer h.{claims}.SIGNATURE_REMOVED_BY_GOOGLE"}
            assert (await client.get("/ui", headers=iap)).status_code == 200


async def test_scheduler_retry_submits_once(client, publisher) -> None:
    headers = {
        "X-CloudScheduler-JobName": "projects/p/locations/l/jobs/nightly",
        "X-CloudScheduler-ScheduleTime": "2026-11-21T03:00:00Z",
    }
    body = {"urls": ["http://a.example/1", "http://a.example/2"]}
    first = await client.post("/v1/jobs", json=body, headers=headers)
    retry = await client.post("/v1/jobs", json=body, headers=headers)
    assert first.status_code == 202 and retry.status_code == 200
    assert first.json()["id"] == retry.json()["id"] and len(publisher.batches) == 1
    headers["X-CloudScheduler-ScheduleTime"] = "2026-11-22T03:00:00Z"
    next_day = await client.post("/v1/jobs", json=body, headers=headers)
    assert next_day.status_code == 202 and next_day.json()["id"] != first.json()["id"]


async def test_stuck_submission_is_republished_once(client, store, publisher) -> None:
    submitted = (await client.post("/v1/jobs", json={"url": "http://a.example/"})).json()
    # a job that holds its batch: marked published by its first claim, and not stuck meanwhile
    assert store.jobs[submitted["id"]].publishing is True
    publisher.published.clear()

    old = datetime.now(UTC) - timedelta(minutes=10)
    job = JobRecord(
        "stuck",
        JobStatus.QUEUED,
        JobSpec(),
        old,
        old,
        old + timedelta(days=1),
        total=3,
        publishing=True,
    )
    items = tuple(BatchItem(f"t{i}", f"http://a.example/{i}") for i in range(3))
    await store.create_job(job, [BatchRecord("stuck", "b", items, old, job.expire_at)])
    claim = await store.claim_batch(BatchClaim("stuck", "b", old, old + timedelta(seconds=1)))
    assert isinstance(claim, Claimed)
    await store.settle(claim.handle, [FinishTask("t0", TaskOutcome(TaskStatus.SUCCEEDED))], old)

    response = await client.post("/v1/maintenance/republish")
    assert response.status_code == 200 and response.json() == {"jobs": 1, "tasks": 2}
    [(message, _)] = publisher.batches
    assert sorted(t.id for t in message.tasks) == ["t1", "t2"]
    assert store.jobs["stuck"].publishing is False
    again = await client.post("/v1/maintenance/republish")
    assert again.json() == {"jobs": 0, "tasks": 0}


async def test_oversized_bodies_are_refused_before_buffering(store, publisher) -> None:
    settings = DispatcherSettings(auth_mode="none", max_body_bytes=2048)
    app = memory_app(settings, store, publisher)
    async with app.router.lifespan_context(app):
        transport = httpx.ASGITransport(app=app)
        async with httpx.AsyncClient(transport=transport, base_url="http://t") as client:
            big = {"urls": [f"http://a.example/{n}" for n in range(500)]}
            declared = await client.post("/v1/jobs", json=big)
            assert declared.status_code == 413
            assert declared.json()["error"]["code"] == "payload_too_large"

            async def chunks():
                for _ in range(10):
                    yield b" " * 1024

            chunked = await client.post(
                "/v1/jobs", content=chunks(), headers={"content-type": "application/json"}
            )
            assert chunked.status_code == 413
            small = await client.post("/v1/jobs", json={"url": "http://a.example/"})
            assert small.status_code == 202
    assert len(store.jobs) == 1


async def test_idempotency_key_returns_the_original_job(client, publisher) -> None:
    body = {"urls": ["http://a.example/1"]}
    headers = {"Idempotency-Key": "order-42"}
    first = await client.post("/v1/jobs", json=body, headers=headers)
    again = await client.post("/v1/jobs", json=body, headers=headers)
    assert first.status_code == 202 and again.status_code == 202
    assert again.json()["id"] == first.json()["id"] and len(publisher.batches) == 1
    assert again.headers["idempotent-replayed"] == "true"
    assert "idempotent-replayed" not in first.headers
    other = await client.post("/v1/jobs", json={"urls": ["http://b.example/"]}, headers=headers)
    assert other.status_code == 422
    assert other.json()["error"]["code"] == "idempotency_key_reused"
    fresh = await client.post("/v1/jobs", json=body, headers={"Idempotency-Key": "order-43"})
    assert fresh.json()["id"] != first.json()["id"]


@pytest.mark.parametrize("key", ["", "x" * 256])
async def test_invalid_idempotency_keys_are_refused(client, key) -> None:
    response = await client.post(
        "/v1/jobs", json={"urls": ["http://a.example/1"]}, headers={"Idempotency-Key": key}
    )
    assert response.status_code in (400, 422), response.text
    assert response.json()["error"]["field"]


async def test_the_openapi_document_says_what_the_api_accepts(client) -> None:
    document = (await client.get("/openapi.json")).json()
    request = document["components"]["schemas"]["JobRequest"]
    assert [branch["required"] for branch in request["oneOf"]] == [
        ["url"],
        ["urls"],
        ["crawl"],
        ["search"],
    ]
    url = request["properties"]["url"]["anyOf"][0]
    assert url["maxLength"] == 2048 and url["pattern"].startswith("^[hH][tT][tT][pP]")
    [host_url] = document["paths"]["/v1/hosts"]["get"]["parameters"]
    assert host_url["schema"]["pattern"] == url["pattern"]
    assert (await client.get("/v1/hosts", params={"url": ""})).status_code == 422
    options = document["components"]["schemas"]["JobOptions"]["properties"]
    assert options["respect_robots"]["type"] == "boolean"
    for strict in ({"respect_robots": 0}, {"max_attempts": "3"}, {"timeout_s": "5"}):
        body = {"url": "http://a.example/", "options": strict}
        assert (await client.post("/v1/jobs", json=body)).status_code == 422, strict
    integral = {"url": "http://a.example/", "options": {"max_attempts": 3.0}}
    assert (await client.post("/v1/jobs", json=integral)).status_code == 202  # JSON's 3.0 is 3


async def test_a_job_id_never_holds_a_colon(client) -> None:
    """``/v1/jobs/x:cancel`` is the cancel resource only: a GET there is a 405, not a lookup of
    the job ``x:cancel``, and the 405 names the methods the schema gives that path."""
    response = await client.get("/v1/jobs/x:cancel")
    assert response.status_code == 405 and response.headers["allow"] == "POST"
    document = (await client.get("/openapi.json")).json()
    [job_id] = document["paths"]["/v1/jobs/{job_id}"]["get"]["parameters"]
    assert job_id["schema"]["pattern"] == "^[^/:]+$"


async def test_a_405_lists_every_method_of_the_path(client) -> None:
    response = await client.request("OPTIONS", "/v1/jobs")
    assert response.status_code == 405 and response.headers["allow"] == "GET, POST"
    assert response.json()["error"]["code"] == "method_not_allowed"


@pytest.mark.parametrize("limit", [True, "5", 0, 501, 2.5])
async def test_a_replay_limit_that_is_not_an_integer_in_range_is_a_422(client, limit) -> None:
    response = await client.post("/v1/dead-letters:replay", json={"limit": limit})
    assert response.status_code == 422
    assert response.json()["error"]["field"] == "limit"


async def test_a_replay_limit_written_as_a_whole_float_is_an_integer(client) -> None:
    response = await client.post("/v1/dead-letters:replay", json={"limit": 250.0})
    assert response.status_code == 200 and response.json() == {"replayed": 0}
