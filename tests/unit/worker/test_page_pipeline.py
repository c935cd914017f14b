"""A job's pipeline runs on each page's extracted data; a refusal fails the task for good."""

from __future__ import annotations

from scrapejobs_shared.domain.jobspec import JobRequest, JobSpec
from scrapejobs_shared.domain.statuses import TaskStatus
from scrapejobs_shared.outcomes.page_outcome import extract_outcome
from scrapejobs_shared.ports.fetcher import FetchResponse

PAGE = b"""<html><body><h1>  Fish &amp;amp; Chips </h1><p class=price> 4.50 </p>
<a href="/next">next</a><p class=none> </p></body></html>"""
FIELDS = {
    "title": {"css": "h1::text"},
    "price": {"css": ".price::text"},
    "none": {"css": ".none::text"},
    "count": {"css": ".price::text", "type": "int"},
}


def _spec(pipeline: list[dict[str, object]], crawl: bool = False) -> JobSpec:
    body: dict[str, object] = {"extract": FIELDS, "pipeline": pipeline}
    body |= {"crawl": {"start_url": "http://a.example/"}} if crawl else {"url": "http://a.example/"}
    return JobSpec.from_request(JobRequest.model_validate(body))


def _response() -> FetchResponse:
    return FetchResponse(
        "http://a.example/", 200, {"content-type": "text/html"}, PAGE, elapsed_ms=5
    )


def test_clean_and_transform_shape_the_data() -> None:
    spec = _spec([{"clean": {}}, {"transform": {"cast": {"price": "float"}}}])
    outcome = extract_outcome(_response(), spec).outcome
    assert outcome.status is TaskStatus.SUCCEEDED and outcome.error is None
    assert outcome.data == {"title": "Fish & Chips", "price": 4.5}
    assert outcome.field_errors is not None and set(outcome.field_errors) == {"count"}


def test_a_validation_failure_fails_the_task_with_the_schema_errors() -> None:
    schema = {"properties": {"price": {"type": "number"}}, "required": ["sku"]}
    spec = _spec([{"clean": {}}, {"validate": {"schema": schema}}])
    page = extract_outcome(_response(), spec)
    outcome = page.outcome
    assert outcome.status is TaskStatus.FAILED and outcome.http_status == 200
    assert outcome.error is not None
    assert outcome.error.startswith("validation: pipeline[1] (validate): $: 'sku' is a required")
    errors = outcome.field_errors or {}
    assert set(errors) == {"count", "$", "$.price"}  # extraction's, then the schema's
    assert errors["$"] == "'sku' is a required property"
    assert errors["$.price"] == "'4.50' is not of type 'number'"
    assert outcome.data == {"title": "Fish & Chips", "price": "4.50"}  # as validate saw it


def test_a_refused_crawl_page_still_yields_its_links() -> None:
    spec = _spec([{"validate": {"schema": {"required": ["sku"]}}}], crawl=True)
    page = extract_outcome(_response(), spec)
    assert page.outcome.status is TaskStatus.FAILED
    assert page.links == ("http://a.example/next",)
