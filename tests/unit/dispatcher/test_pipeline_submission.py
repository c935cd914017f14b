"""Submitting a pipeline: a bad one is a 422 naming the field, and nothing is written."""

from __future__ import annotations

import pytest

from scrapejobs_shared.adapters.memory.job_store import MemoryJobStore
from scrapejobs_shared.adapters.memory.publisher import MemoryTaskPublisher
from scrapejobs_shared.ports.page import PageRequest
from support.memory_dispatcher import memory_client

URL = "http://shop.example/p/1"
BAD = [
    ([{"dedupe": {}}], "pipeline[0].dedupe", "unknown field"),
    ([{"clean": {}}, {}], "pipeline[1]", "exactly one key"),
    ([{"clean": {"lowercase": True}}], "pipeline[0].clean.lowercase", "unknown field"),
    (
        [{"validate": {"schema": {"type": "integer", "minimum": "zero"}}}],
        "pipeline[0].validate.schema",
        "invalid JSON Schema at ['minimum']",
    ),
    (
        [{"validate": {"schema": {"$ref": "https://evil.example/s.json"}}}],
        "pipeline[0].validate.schema",
        "only local references",
    ),
    ([{"transform": {"cast": {"n": "integer"}}}], "pipeline[0].transform.cast.n", "Input should"),
    ({"clean": {}}, "pipeline", "valid list"),
]


@pytest.mark.parametrize(("pipeline", "field", "message"), BAD, ids=[b[1] for b in BAD])
async def test_an_invalid_pipeline_is_a_422_naming_the_field(pipeline, field, message) -> None:
    store, publisher = MemoryJobStore(), MemoryTaskPublisher()
    async with memory_client(store, publisher=publisher) as client:
        response = await client.post("/v1/jobs", json={"url": URL, "pipeline": pipeline})
        assert response.status_code == 422
        error = response.json()["error"]
        assert error["code"] == "invalid_request" and error["field"] == field
        assert error["message"].startswith(f"{field}: ") and message in error["message"]
        assert (await store.list_jobs(None, PageRequest(10))).items == []
        assert publisher.batches == []


async def test_a_valid_pipeline_is_kept_with_the_job() -> None:
    store = MemoryJobStore()
    pipeline = [
        {"clean": {"skip": []}},
        {"validate": {"schema": {"required": ["title"]}}},
        {"transform": {"rename": {"title": "name"}, "cast": {"price": "float"}}},
    ]
    async with memory_client(store) as client:
        response = await client.post("/v1/jobs", json={"url": URL, "pipeline": pipeline})
        assert response.status_code == 202
        job = await store.get_job(response.json()["id"])
    assert job is not None
    assert [stage.name for stage in job.spec.pipeline] == ["clean", "validate", "transform"]


async def test_the_openapi_document_describes_the_stages() -> None:
    async with memory_client(MemoryJobStore()) as client:
        document = (await client.get("/openapi.json")).json()
    schemas = document["components"]["schemas"]
    pipeline = schemas["JobRequest"]["properties"]["pipeline"]
    assert pipeline["items"] == {"$ref": "#/components/schemas/Stage"}
    stage = schemas["Stage"]
    assert stage["additionalProperties"] is False and stage["maxProperties"] == 1
    assert schemas["ValidateOptions"]["required"] == ["schema"]
    assert schemas["TransformOptions"]["properties"]["cast"]["additionalProperties"] == {
        "enum": ["int", "float", "bool", "str"],
        "type": "string",
    }
