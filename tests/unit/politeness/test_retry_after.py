"""Retry-After header values as delays."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest

from scrapejobs_shared.politeness.retry_after import parse_retry_after

NOW = datetime(1994, 11, 6, 8, 48, 37, tzinfo=UTC)  # one minute before the RFC's example date


@pytest.mark.parametrize(
    ("value", "seconds"),
    [("0", 0.0), ("120", 120.0), (" 7 ", 7.0), ("1.5", 1.5), ("007", 7.0)],
)
def test_delay_seconds(value: str, seconds: float) -> None:
    assert parse_retry_after(value, NOW) == seconds


@pytest.mark.parametrize(
    "value",
    [
        "Sun, 06 Nov 1994 08:49:37 GMT",  # IMF-fixdate
        "Sunday, 06-Nov-94 08:49:37 GMT",  # obsolete RFC 850
        "Sun Nov  6 08:49:37 1994",  # obsolete asctime (no zone: GMT)
    ],
)
def test_http_date_forms(value: str) -> None:
    assert parse_retry_after(value, NOW) == 60.0


def test_date_with_numeric_zone() -> None:
    assert parse_retry_after("Sun, 06 Nov 1994 09:49:37 +0100", NOW) == 60.0


def test_past_date_is_zero() -> None:
    assert parse_retry_after("Sun, 06 Nov 1994 07:00:00 GMT", NOW) == 0.0


def test_cap_applies_to_both_forms() -> None:
    assert parse_retry_after("86400", NOW) == 300.0
    assert parse_retry_after("86400", NOW, cap_s=10) == 10.0
    assert parse_retry_after("9" * 400, NOW) == 300.0
    later = (NOW + timedelta(days=2)).strftime("%a, %d %b %Y %H:%M:%S GMT")
    assert parse_retry_after(later, NOW) == 300.0
    assert parse_retry_after(later, NOW, cap_s=3600) == 3600.0


def test_naive_now_is_taken_as_utc() -> None:
    naive = NOW.replace(tzinfo=None)
    assert parse_retry_after("Sun, 06 Nov 1994 08:49:37 GMT", naive) == 60.0


@pytest.mark.parametrize(
    "value",
    [
        None,
        "",
        "   ",
        "-5",
        "-1.5",
        "+5",
        "soon",
        "1e3",
        "nan",
        "inf",
        "5s",
        "1.",
        ".5",
        "Sun, 99 Nov 1994 08:49:37 GMT",
        "Mon, 06 Nov 1994",
    ],
)
def test_missing_or_garbage_is_none(value: str | None) -> None:
    assert parse_retry_after(value, NOW) is None
