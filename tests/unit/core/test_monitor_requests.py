"""A monitor's body: what a job takes, a schedule and noise rules, each bad part named."""

from __future__ import annotations

from typing import Any

import pytest
from pydantic import ValidationError

from scrapejobs_shared.domain.monitor_rules import Condition, parse_condition
from scrapejobs_shared.domain.monitors import MonitorRequest, MonitorStatus, MonitorUpdate

BODY: dict[str, Any] = {
    "urls": ["https://shop.example/p/1"],
    "extract": {
        "price": {"css": ".price::text", "type": "float"},
        "stock": {"css": ".stock::text"},
    },
    "name": "prices",
    "schedule": {"text": "every 30 minutes", "timezone": "Europe/Paris"},
}


@pytest.mark.parametrize(
    ("text", "condition"),
    [
        ("price < 20", Condition("price", "<", 20.0)),
        ("price>=19.99", None),  # operators are written between spaces
        ("price >= 19.99", Condition("price", ">=", 19.99)),
        ('stock becomes "in stock"', Condition("stock", "becomes", "in stock")),
        ("stock becomes 'sold out'", Condition("stock", "becomes", "sold out")),
        ("stock == in stock", Condition("stock", "==", "in stock")),
        ("stock != 0", Condition("stock", "!=", 0.0)),
        ("title changes", Condition("title", "changes", None)),
        ("price < cheap", None),  # an order compares numbers
        ("price", None),
        ("< 20", None),
        ("price is 20", None),
    ],
)
def test_conditions_are_read_or_refused(text: str, condition: Condition | None) -> None:
    if condition is None:
        with pytest.raises(ValueError):
            parse_condition(text)
    else:
        assert parse_condition(text) == condition


def test_a_monitor_runs_the_job_its_body_describes() -> None:
    body = BODY | {"rules": {"notify_when": ["price < 20"]}, "labels": {"team": "pricing"}}
    request = MonitorRequest.model_validate(body, strict=False)
    assert request.status is MonitorStatus.ACTIVE and request.retention_days == 30
    job = request.job_request()
    assert job.urls == BODY["urls"] and set(job.extract) == {"price", "stock"}
    assert job.labels == {"team": "pricing"}
    assert "schedule" not in job.model_dump()


def test_a_check_asks_the_site_for_markdown_without_the_ignored_elements() -> None:
    options = {"formats": ["links"], "content": {"exclude": [".ad"]}, "cache_max_age_s": 3600}
    rules = {"ignore_selectors": ["#clock", ".visitors"]}
    body = BODY | {"options": options, "rules": rules}
    job = MonitorRequest.model_validate(body, strict=False).job_request()
    assert job.options.formats == ["links", "markdown"]
    assert job.options.content.exclude == [".ad", "#clock", ".visitors"]
    assert job.options.cache_max_age_s == 0  # never answered from the page cache
    many = {"ignore_selectors": [f".n{n}" for n in range(50)]}
    with pytest.raises(ValidationError, match="together hold at most 50"):
        MonitorRequest.model_validate(body | {"rules": many}, strict=False)


@pytest.mark.parametrize(
    ("change", "loc", "says"),
    [
        ({"schedule": {"cron": "* * *"}}, ("schedule", "cron"), "five-field"),
        (
            {"schedule": {"text": "hourly", "timezone": "Nowhere/Land"}},
            ("schedule", "timezone"),
            "time zone",
        ),
        ({"rules": {"notify_when": ["price <"]}}, ("rules", "notify_when"), "not a condition"),
        ({"rules": {"ignore_fields": ["colour"]}}, ("rules",), "does not extract: colour"),
        (
            {"rules": {"thresholds": {"price": {}}}},
            ("rules", "thresholds", "price"),
            "'absolute', 'relative'",
        ),
        (
            {"rules": {"thresholds": {"price": {"relative": -1}}}},
            ("rules", "thresholds", "price", "relative"),
            "greater than or equal",
        ),
        (
            {"rules": {"ignore_selectors": ["div[["]}},
            ("rules", "ignore_selectors"),
            "not a CSS selector",
        ),
        ({"rules": {"min_text_change": 2}}, ("rules", "min_text_change"), "less than or equal"),
        ({"rules": {"mute": True}}, ("rules", "mute"), "Extra inputs"),
        ({"retention_days": 0}, ("retention_days",), "greater than or equal"),
        ({"status": "sleeping"}, ("status",), "'active' or 'paused'"),
        ({"name": ""}, ("name",), "at least 1 character"),
    ],
)
def test_a_bad_monitor_names_its_field(
    change: dict[str, Any], loc: tuple[str, ...], says: str
) -> None:
    with pytest.raises(ValidationError) as caught:
        MonitorRequest.model_validate(BODY | change, strict=False)
    [error] = caught.value.errors()
    assert error["loc"] == loc and says in error["msg"], error


def test_an_update_names_only_what_changes() -> None:
    update = MonitorUpdate.model_validate({"status": "paused"}, strict=False)
    assert update.model_dump(exclude_unset=True) == {"status": MonitorStatus.PAUSED}
    with pytest.raises(ValidationError):
        MonitorUpdate.model_validate({"urls": ["https://other.example/"]})
