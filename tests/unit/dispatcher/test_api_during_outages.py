"""A dependency that stops answering, over the in-memory adapters (they raise what the real
ones raise past their deadline: ``DependencyUnavailable``): every request answers 503 with
Retry-After naming it, a submission says what became of its job, nothing is failed for it,
and a keyed retry afterwards gives one job whose tasks are published then."""

from __future__ import annotations

from typing import Any

import pytest

from scrapejobs_dispatcher.jobs.views import UnavailableResponse
from scrapejobs_shared.adapters.memory.job_store import MemoryJobStore
from scrapejobs_shared.adapters.memory.publisher import MemoryTaskPublisher
from scrapejobs_shared.ports.dependency_unavailable import FIRESTORE, DependencyUnavailable
from support.memory_dispatcher import memory_client

URL = "https://example.com/a"


class AwayStore(MemoryJobStore):
    """The memory store, every call of which raises the outage while ``away``."""

    away = False

    def __getattribute__(self, name: str) -> Any:
        found = super().__getattribute__(name)
        if name.startswith("_") or not super().__getattribute__("away") or not callable(found):
            return found

        async def unavailable(*_: Any, **__: Any) -> Any:
            raise DependencyUnavailable(FIRESTORE, 5.0)

        return unavailable


def _assert_unavailable(response: Any, dependency: str) -> dict[str, Any]:
    assert response.status_code == 503, response.text
    assert response.headers["Retry-After"] == "5"
    error: dict[str, Any] = response.json()["error"]
    assert error["code"] == "dependency_unavailable" and error["dependency"] == dependency
    assert error["message"].startswith(f"{dependency} did not answer within 5 s")
    UnavailableResponse.model_validate(response.json())  # the shape the OpenAPI document gives
    return error


async def test_the_openapi_document_lists_the_503_of_every_api_operation() -> None:
    async with memory_client(MemoryJobStore()) as client:
        document = (await client.get("/openapi.json")).json()
    operations = [
        (method, path, operation["responses"])
        for path, methods in document["paths"].items()
        if path.startswith("/v1/")
        for method, operation in methods.items()
    ]
    assert len(operations) > 15
    for method, path, responses in operations:
        assert "503" in responses, (method, path)
    submit = document["paths"]["/v1/jobs"]["post"]["responses"]["503"]
    assert "Retry-After" in submit["headers"]
    assert submit["content"]["application/json"]["schema"]["$ref"].endswith("UnavailableResponse")


async def test_pubsub_away_a_submission_is_stored_not_failed_and_a_keyed_retry_publishes_it() -> (
    None
):
    store, publisher = MemoryJobStore(), MemoryTaskPublisher()
    async with memory_client(store, publisher=publisher) as client:
        publisher.away = True
        headers = {"Idempotency-Key": "outage-1"}
        body = {"urls": [URL, "https://example.com/b"]}
        answer = await client.post("/v1/jobs", json=body, headers=headers)
        error = _assert_unavailable(answer, "Pub/Sub")
        assert error["stored"] is True and "Idempotency-Key" in error["message"]
        job_id = error["job_id"]
        status = (await client.get(f"/v1/jobs/{job_id}")).json()
        assert status["status"] == "queued" and status["counts"]["failed"] == 0
        assert store.jobs[job_id].publishing and not publisher.published

        publisher.away = False
        retry = await client.post("/v1/jobs", json=body, headers=headers)
        assert retry.status_code == 202 and retry.json()["id"] == job_id
        assert retry.headers["idempotent-replayed"] == "true"
        assert len(store.jobs) == 1 and not store.jobs[job_id].publishing
        [(message, _)] = publisher.batches
        assert {task.url for task in message.tasks} == set(body["urls"])


async def test_pubsub_away_an_unkeyed_one_url_submission_is_kept_for_maintenance() -> None:
    store, publisher = MemoryJobStore(), MemoryTaskPublisher()
    async with memory_client(store, publisher=publisher) as client:
        publisher.away = True
        error = _assert_unavailable(await client.post("/v1/jobs", json={"urls": [URL]}), "Pub/Sub")
        job_id = error["job_id"]
        publisher.away = False
        answer = await client.post("/v1/maintenance/republish", params={"older_than_s": 0})
        assert answer.json() == {"jobs": 1, "tasks": 1}
        [(message, _)] = publisher.batches
        assert message.job_id == job_id
        status = (await client.get(f"/v1/jobs/{job_id}")).json()
        assert status["counts"]["queued"] == 1 and status["counts"]["failed"] == 0


@pytest.mark.parametrize(
    ("method", "path", "body"),
    [
        ("GET", "/v1/jobs/0123abcd", None),
        ("GET", "/v1/jobs", None),
        ("GET", "/v1/jobs/0123abcd/results", None),
        ("GET", "/v1/dead-letters", None),
        ("POST", "/v1/jobs/0123abcd:cancel", None),
    ],
)
async def test_firestore_away_every_api_request_answers_503_naming_it(
    method: str, path: str, body: Any
) -> None:
    store = AwayStore()
    async with memory_client(store) as client:
        store.away = True
        _assert_unavailable(await client.request(method, path, json=body), FIRESTORE)


async def test_firestore_away_a_submission_may_or_may_not_be_stored() -> None:
    store = AwayStore()
    async with memory_client(store) as client:
        store.away = True
        answer = await client.post(
            "/v1/jobs", json={"urls": [URL]}, headers={"Idempotency-Key": "outage-2"}
        )
        error = _assert_unavailable(answer, FIRESTORE)
        assert error["stored"] is None and "may or may not" in error["message"]


async def test_firestore_away_the_dashboard_shows_a_banner_and_comes_back() -> None:
    store = AwayStore()
    async with memory_client(store) as client:
        store.away = True
        for headers in ({}, {"HX-Request": "true"}):  # a page opened, a poll
            page = await client.get("/ui", headers=headers)
            assert page.status_code == 503 and page.headers["Retry-After"] == "5"
            assert "text/html" in page.headers["content-type"]
            assert "Firestore is not answering" in page.text
        store.away = False
        assert (await client.get("/ui", headers={"HX-Request": "true"})).status_code == 200
