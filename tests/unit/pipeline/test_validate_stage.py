"""The validate stage: JSON Schema problems by JSON path; schemas checked up front."""

from __future__ import annotations

import pytest

from scrapejobs_shared.pipeline import StageRejected
from scrapejobs_shared.pipeline.validate import check_schema, validate

SCHEMA = {
    "type": "object",
    "required": ["title", "price"],
    "properties": {
        "title": {"type": "string", "minLength": 1},
        "price": {"type": "number"},
        "tags": {"type": "array", "items": {"type": "string"}},
        "url": {"type": "string", "format": "email"},
    },
}


def test_conforming_data_passes() -> None:
    validate(SCHEMA, {"title": "A", "price": 3, "tags": ["x"]})


def test_problems_are_reported_by_json_path() -> None:
    with pytest.raises(StageRejected) as caught:
        validate(SCHEMA, {"price": "3", "tags": ["x", 4]})
    assert caught.value.problems == {
        "$": "'title' is a required property",
        "$.price": "'3' is not of type 'number'",
        "$.tags[1]": "4 is not of type 'string'",
    }


def test_several_problems_at_one_place_are_joined_and_format_is_asserted() -> None:
    schema = {"properties": {"a": {"type": "integer", "minimum": 5, "multipleOf": 2}}}
    with pytest.raises(StageRejected) as caught:
        validate(schema, {"a": 3})
    assert caught.value.problems["$.a"].count(";") == 1
    with pytest.raises(StageRejected) as caught:
        validate(SCHEMA, {"title": "t", "price": 1, "url": "not an address"})
    assert caught.value.problems == {"$.url": "'not an address' is not a 'email'"}


def test_a_long_instance_is_cut_in_the_message() -> None:
    with pytest.raises(StageRejected) as caught:
        validate({"properties": {"a": {"type": "integer"}}}, {"a": "x" * 5000})
    assert len(caught.value.problems["$.a"]) <= 300


def test_an_unresolvable_local_reference_is_a_problem_not_a_crash() -> None:
    with pytest.raises(StageRejected) as caught:
        validate({"properties": {"a": {"$ref": "#/$defs/missing"}}}, {"a": 1})
    assert caught.value.problems["$"].startswith("unresolvable reference")


@pytest.mark.parametrize(
    ("schema", "message"),
    [
        ({"type": "nope"}, "invalid JSON Schema at ['type']"),
        ({"pattern": "(("}, "is not a 'regex'"),
        ({"properties": {"a": {"minimum": "1"}}}, "invalid JSON Schema at ['properties']"),
        ({"$ref": "https://example.com/schema.json"}, "only local references"),
        ({"items": {"$ref": "other.json#/x"}}, "only local references"),
        ({"$schema": "https://example.com/my-draft"}, "unknown '$schema'"),
    ],
)
def test_invalid_schemas_are_refused(schema, message) -> None:
    with pytest.raises(ValueError, match=None) as caught:
        check_schema(schema)
    assert message in str(caught.value)


def test_other_drafts_are_honoured() -> None:
    draft7 = {"$schema": "http://json-schema.org/draft-07/schema#", "items": [{"type": "string"}]}
    check_schema(draft7)
    with pytest.raises(StageRejected):
        validate({**draft7, "properties": {"a": {"items": [{"type": "string"}]}}}, {"a": [1]})
