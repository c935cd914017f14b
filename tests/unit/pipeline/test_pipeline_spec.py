"""What a submission's ``pipeline`` accepts: refused up front with the path of the problem;
the OpenAPI schema says the same; stored and read back unchanged."""

from __future__ import annotations

import pytest
from pydantic import ValidationError

from scrapejobs_shared.domain.jobspec import JobRequest, JobSpec

URL = "http://shop.example/p/1"
PIPELINE = [
    {"clean": {"skip": []}},
    {"validate": {"schema": {"type": "object", "enum": [[1], {"": {"__x__": 1}}]}}},
    {"transform": {"rename": {"a": "b"}, "defaults": {"c": [[1]]}, "cast": {"b": "int"}}},
]

BAD = [
    ([{"sort": {}}], ("pipeline", 0, "sort"), "Extra inputs are not permitted"),
    ([{}], ("pipeline", 0), "exactly one key"),
    ([{"clean": {}, "transform": {}}], ("pipeline", 0), "exactly one key"),
    ([{"clean": None}], ("pipeline", 0, "clean"), "valid dictionary"),
    (["clean"], ("pipeline", 0), "valid dictionary"),
    ([{"clean": {"strip": True}}], ("pipeline", 0, "clean", "strip"), "Extra inputs"),
    ([{"clean": {"trim": 0}}], ("pipeline", 0, "clean", "trim"), "valid boolean"),  # strict
    ([{"validate": {}}], ("pipeline", 0, "validate", "schema"), "Field required"),
    (
        [{"clean": {}}, {"validate": {"schema": {"type": "nope"}}}],
        ("pipeline", 1, "validate", "schema"),
        "invalid JSON Schema",
    ),
    (
        [{"validate": {"schema": {"$ref": "http://169.254.169.254/"}}}],
        ("pipeline", 0, "validate", "schema"),
        "only local references",
    ),
    (
        [{"transform": {"cast": {"a": "decimal"}}}],
        ("pipeline", 0, "transform", "cast", "a"),
        "Input should be",
    ),
    (
        [{"transform": {"rename": {"a": "x", "b": "x"}}}],
        ("pipeline", 0, "transform", "rename"),
        "several fields renamed",
    ),
    ([{"clean": {}}] * 21, ("pipeline",), "at most 20 items"),
]


@pytest.mark.parametrize(("pipeline", "loc", "message"), BAD, ids=[str(b[1]) for b in BAD])
def test_bad_pipelines_are_refused_at_their_path(pipeline, loc, message) -> None:
    with pytest.raises(ValidationError) as caught:
        JobRequest.model_validate({"url": URL, "pipeline": pipeline})
    [error] = caught.value.errors()
    assert error["loc"] == loc and message in error["msg"]


def test_a_pipeline_round_trips_through_the_stored_spec() -> None:
    request = JobRequest.model_validate({"url": URL, "pipeline": PIPELINE})
    spec = JobSpec.from_request(request)
    document = spec.to_document()
    assert isinstance(document["pipeline"], str)  # one JSON value, whatever the schema holds
    again = JobSpec.model_validate(document)
    assert [stage.name for stage in again.pipeline] == ["clean", "validate", "transform"]
    assert again.to_document() == document
    assert "pipeline" not in JobSpec.from_request(JobRequest(url=URL)).to_document()


def test_the_openapi_schema_says_one_key_per_stage() -> None:
    schema = JobRequest.model_json_schema()
    assert schema["properties"]["pipeline"]["maxItems"] == 20
    stage = schema["$defs"]["Stage"]
    assert stage["additionalProperties"] is False
    assert (stage["minProperties"], stage["maxProperties"]) == (1, 1)
    assert set(stage["properties"]) == {"clean", "validate", "transform", "ai"}
    assert all("default" not in p and "$ref" in p for p in stage["properties"].values())
    for name in ("CleanOptions", "ValidateOptions", "TransformOptions", "AiOptions"):
        assert schema["$defs"][name]["additionalProperties"] is False
    assert schema["$defs"]["ValidateOptions"]["required"] == ["schema"]
    assert schema["$defs"]["AiOptions"]["required"] == ["prompt", "schema"]
    assert schema["properties"]["pipeline"]["maxContains"] == 1  # at most one ai stage
