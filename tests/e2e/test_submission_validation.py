"""Bad input: 422 naming the field, and nothing written to Firestore or published."""

from __future__ import annotations

import uuid

import pytest
from google.cloud import pubsub_v1

from scrapejobs_shared.ports.page import PageRequest
from support.jobs import submit

pytestmark = [pytest.mark.emulators, pytest.mark.stack]

BAD = [
    ({"url": "ftp://example.com/x"}, "url"),
    ({"urls": ["http://ok.example/", "javascript:alert(1)"]}, "urls[1]"),
    ({"urls": []}, "urls"),
    ({"urls": [f"http://h.example/{n}" for n in range(10_001)]}, "urls"),
    ({"url": "http://x.example/", "extract": {"t": {"css": "h1[["}}}, "extract.t.css"),
    ({"url": "http://x.example/", "extract": {"t": {"xpath": "//h1["}}}, "extract.t.xpath"),
    ({"url": "http://x.example/", "bogus": 1}, "bogus"),
    ({"url": "http://x.example/", "options": {"retries": 3}}, "options.retries"),
    ({"url": "http://x.example/", "urls": ["http://x.example/"]}, "body"),
    ({"url": "http://x.example/", "options": {"headers": {"Host": "evil"}}}, "options.headers"),
    ({"url": "http://x.example/", "pipeline": [{"clean": {}}, {"sort": {}}]}, "pipeline[1].sort"),
    (
        {"url": "http://x.example/", "pipeline": [{"validate": {"schema": {"type": 3}}}]},
        "pipeline[0].validate.schema",
    ),
    ({"url": "http://x.example/", "options": {"render": "yes"}}, "options.render"),
    (
        {"url": "http://x.example/", "options": {"render": {"wait_ms": 30_001}}},
        "options.render.wait_ms",
    ),
    (
        {"url": "http://x.example/", "options": {"render": {"wait_for": "p::text"}}},
        "options.render.wait_for",
    ),
    (
        {"url": "http://x.example/", "options": {"render": {"block": ["scripts"]}}},
        "options.render.block[0]",
    ),
    (
        {"url": "http://x.example/", "options": {"render": {"viewport": {"width": 10}}}},
        "options.render.viewport.width",
    ),
]


@pytest.fixture
def task_tap(stack):
    """A pull subscription on the task topic: sees every message published while it exists."""
    subscriber = pubsub_v1.SubscriberClient()
    name = subscriber.subscription_path(stack.config.project_id, f"tap-{uuid.uuid4().hex[:8]}")
    topic = f"projects/{stack.config.project_id}/topics/{stack.config.topology.task_topic}"
    subscriber.create_subscription(request={"name": name, "topic": topic})
    yield (
        lambda: (
            subscriber.pull(
                request={"subscription": name, "max_messages": 10}, timeout=5
            ).received_messages
        )
    )
    subscriber.delete_subscription(request={"subscription": name})
    subscriber.close()


@pytest.mark.parametrize(("body", "field"), BAD, ids=[f for _, f in BAD])
async def test_bad_submission_is_rejected_naming_the_field(api, body, field) -> None:
    response = await api.post("/v1/jobs", json=body)
    assert response.status_code == 422
    error = response.json()["error"]
    assert error["code"] == "invalid_request" and error["field"] == field
    assert error["message"].startswith(f"{field}:")


async def test_rejected_submissions_write_and_publish_nothing(api, store, task_tap) -> None:
    before = await store.list_jobs(None, PageRequest(1000))
    for body, _ in BAD:
        assert (await api.post("/v1/jobs", json=body)).status_code == 422
    after = await store.list_jobs(None, PageRequest(1000))
    assert [j.id for j in after.items] == [j.id for j in before.items]
    assert task_tap() == []


async def test_api_errors_are_json(api, site) -> None:
    missing = await api.get("/v1/jobs/nope")
    assert missing.status_code == 404 and missing.json()["error"]["code"] == "not_found"
    bad_token = await api.get("/v1/jobs", params={"page_token": "%%%"})
    assert bad_token.status_code == 400 and bad_token.json()["error"]["field"] == "page_token"
    bad_size = await api.get("/v1/jobs", params={"page_size": 0})
    assert bad_size.status_code == 422 and bad_size.json()["error"]["field"] == "page_size"
    job = await submit(api, {"url": f"{site.url}/product/1"})
    assert job["total"] == 1


@pytest.mark.parametrize("job_id", ["__x__", "__reserved__", "..", "0" * 300])
async def test_reserved_or_malformed_job_ids_are_not_found(api, job_id) -> None:
    for method, path in (
        ("GET", f"/v1/jobs/{job_id}"),
        ("GET", f"/v1/jobs/{job_id}/results"),
        ("POST", f"/v1/jobs/{job_id}:cancel"),
        ("POST", f"/v1/jobs/{job_id}:retry"),
    ):
        response = await api.request(method, path)
        assert response.status_code == 404, (method, path, response.text)
        assert response.json()["error"]["code"] == "not_found"
