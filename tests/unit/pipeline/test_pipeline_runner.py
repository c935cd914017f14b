"""A pipeline runs its stages in order; the first refusal stops it, naming the stage."""

from __future__ import annotations

import pytest
from pydantic import TypeAdapter

from scrapejobs_shared.pipeline import Pipeline, PipelineFailure, run_pipeline

PIPELINE = TypeAdapter(Pipeline)


def _pipeline(stages):
    return PIPELINE.validate_python(stages)


def test_stages_run_in_order_each_on_the_previous_output() -> None:
    stages = _pipeline(
        [
            {"clean": {}},
            {"transform": {"rename": {"cost": "price"}, "cast": {"price": "float"}}},
            {
                "validate": {
                    "schema": {"required": ["price"], "properties": {"price": {"type": "number"}}}
                }
            },
            {"transform": {"defaults": {"currency": "EUR"}}},
        ]
    )
    data = {"title": " A &amp; B ", "cost": " 3.50 ", "note": "  "}
    assert run_pipeline(stages, data) == {"title": "A & B", "price": 3.5, "currency": "EUR"}
    assert data["cost"] == " 3.50 "


def test_an_empty_pipeline_returns_the_data() -> None:
    assert run_pipeline([], {"a": 1}) == {"a": 1}


def test_the_first_refusal_stops_the_pipeline_with_a_validation_error() -> None:
    stages = _pipeline(
        [
            {"clean": {}},
            {"validate": {"schema": {"properties": {"price": {"type": "number"}}}}},
            {"transform": {"cast": {"price": "float"}}},
        ]
    )
    with pytest.raises(PipelineFailure) as caught:
        run_pipeline(stages, {"price": " 3 ", "x": ""})
    failure = caught.value
    assert failure.reason == "validation" and failure.index == 1 and failure.stage == "validate"
    assert failure.problems == {"$.price": "'3' is not of type 'number'"}
    assert failure.data == {"price": "3"}  # what the validate stage received
    assert (
        failure.error == "validation: pipeline[1] (validate): $.price: '3' is not of type 'number'"
    )


def test_a_failed_cast_is_a_validation_failure_too() -> None:
    with pytest.raises(PipelineFailure) as caught:
        run_pipeline(_pipeline([{"transform": {"cast": {"n": "int"}}}]), {"n": "x"})
    assert caught.value.error.startswith("validation: pipeline[0] (transform): $.n: cannot cast")


def test_a_long_error_is_cut() -> None:
    schema = {"additionalProperties": {"type": "integer"}}
    data = {f"field_{n}": "x" * 200 for n in range(50)}
    with pytest.raises(PipelineFailure) as caught:
        run_pipeline(_pipeline([{"validate": {"schema": schema}}]), data)
    assert len(caught.value.error) <= 1000 and len(caught.value.problems) == 20
