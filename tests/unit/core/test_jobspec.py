from __future__ import annotations

import pytest
from pydantic import ValidationError

from scrapejobs_shared.domain.jobspec import JobRequest
from scrapejobs_shared.extraction.field_types import MAX_URLS


def _error(body: dict) -> str:
    with pytest.raises(ValidationError) as info:
        JobRequest.model_validate(body)
    return str(info.value)


def test_single_and_many_urls() -> None:
    assert JobRequest.model_validate({"url": "https://a.example/x"}).target_urls() == [
        "https://a.example/x"
    ]
    many = JobRequest.model_validate({"urls": ["http://a.example/1", "http://a.example/2"]})
    assert many.target_urls() == ["http://a.example/1", "http://a.example/2"]


@pytest.mark.parametrize(
    ("body", "needle"),
    [
        ({}, "exactly one of 'url', 'urls', 'crawl' or 'search'"),
        ({"url": "http://a.example", "urls": ["http://a.example"]}, "exactly one"),
        ({"url": "file:///etc/passwd"}, "scheme must be http or https"),
        ({"url": "http://user:pw@a.example/"}, "credentials"),
        ({"url": "http:///nohost"}, "no host"),
        ({"url": "http://a.example:99999/"}, "invalid port"),
        ({"urls": []}, "at least 1"),
        ({"urls": ["http://a.example/"] * (MAX_URLS + 1)}, "at most 10000"),
        ({"url": "http://a.example", "extract": {"x": {}}}, "exactly one of 'css' or 'xpath'"),
        ({"url": "http://a.example", "extract": {"x": {"css": "a", "xpath": "//a"}}}, "exactly"),
        ({"url": "http://a.example", "extract": {"bad name": {"css": "a"}}}, "invalid field name"),
        ({"url": "http://a.example", "options": {"timeout_s": 0}}, "greater than 0"),
        ({"url": "http://a.example", "options": {"headers": {"Metadata-Flavor": "x"}}}, "may not"),
        ({"url": "http://a.example", "options": {"headers": {"X-A": "b\r\nc"}}}, "invalid header"),
        ({"url": "http://a.example", "labels": {"": "x"}}, "label"),
    ],
)
def test_rejections_explain_the_problem(body: dict, needle: str) -> None:
    assert needle in _error(body)
