"""A monitor's schedule: cron or words, in a time zone, next times in UTC."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest
from pydantic import ValidationError

from scrapejobs_shared.domain.monitor_schedule import Schedule, cron_of_text


@pytest.mark.parametrize(
    ("text", "cron"),
    [
        ("every minute", "* * * * *"),
        ("every 30 minutes", "*/30 * * * *"),
        ("Every  5 Minutes", "*/5 * * * *"),
        ("hourly", "0 * * * *"),
        ("every hour", "0 * * * *"),
        ("every 6 hours", "0 */6 * * *"),
        ("daily", "0 0 * * *"),
        ("daily at 9:00", "0 9 * * *"),
        ("every day at 6pm", "0 18 * * *"),
        ("every day at 12am", "0 0 * * *"),
        ("daily at 23:45", "45 23 * * *"),
        ("weekly", "0 0 * * 1"),
        ("weekly on sunday", "0 0 * * 0"),
        ("weekly on monday at 8:30", "30 8 * * 1"),
        ("every friday at 17:00", "0 17 * * 5"),
        ("on tuesdays at 7am", "0 7 * * 2"),
        ("monthly", "0 0 1 * *"),
        ("monthly at 4:15", "15 4 1 * *"),
    ],
)
def test_words_say_a_cron_expression(text: str, cron: str) -> None:
    assert cron_of_text(text) == cron
    assert Schedule(text=text).expression() == cron


def test_next_times_follow_the_zone_and_its_daylight_saving() -> None:
    paris = Schedule(text="daily at 9:00", timezone="Europe/Paris")
    # winter: UTC+1; after 2026-03-29 summer: UTC+2
    assert paris.next_after(datetime(2026, 3, 27, 12, tzinfo=UTC)) == datetime(
        2026, 3, 28, 8, tzinfo=UTC
    )
    assert paris.next_after(datetime(2026, 3, 29, 12, tzinfo=UTC)) == datetime(
        2026, 3, 30, 7, tzinfo=UTC
    )


def test_the_next_time_is_strictly_later() -> None:
    half_hourly = Schedule(cron="*/30 * * * *")
    at = datetime(2026, 11, 27, 10, 30, tzinfo=UTC)
    assert half_hourly.next_after(at) == datetime(2026, 11, 27, 11, 0, tzinfo=UTC)
    assert half_hourly.next_after(at.replace(second=1)) == datetime(2026, 11, 27, 11, tzinfo=UTC)
    assert half_hourly.next_after(at.replace(minute=29, second=59)) == at


@pytest.mark.parametrize(
    ("body", "field", "says"),
    [
        ({"cron": "61 * * * *"}, "cron", "not a valid cron expression"),
        ({"cron": "* * *"}, "cron", "five-field"),
        ({"cron": "@hourly"}, "cron", "five-field"),
        ({"cron": "0 0 31 2 *"}, "cron", "not a valid cron expression"),  # never fires
        ({"text": "whenever"}, "text", "not a schedule this API reads"),
        ({"text": "every 90 minutes"}, "text", "every 1 to 59"),
        ({"text": "daily at 25:00"}, "text", "not a time of day"),
        ({"text": "daily at 13pm"}, "text", "1 to 12"),
        ({"cron": "0 * * * *", "timezone": "Mars/Olympus"}, "timezone", "unknown time zone"),
        ({"cron": "0 * * * *", "timezone": "../etc/passwd"}, "timezone", "unknown time zone"),
        ({"cron": "0 * * * *", "every": 5}, "every", "Extra inputs"),
    ],
)
def test_a_bad_schedule_names_its_field(body: dict[str, object], field: str, says: str) -> None:
    with pytest.raises(ValidationError) as caught:
        Schedule.model_validate(body)
    [error] = caught.value.errors()
    assert error["loc"] == (field,) and says in error["msg"]


@pytest.mark.parametrize("body", [{}, {"cron": "0 * * * *", "text": "hourly"}])
def test_a_schedule_has_one_form(body: dict[str, str]) -> None:
    with pytest.raises(ValidationError, match="exactly one of 'cron' or 'text'"):
        Schedule.model_validate(body)


def test_monitors_of_one_schedule_spread_over_a_tenth_of_its_interval() -> None:
    hourly = Schedule.model_validate({"text": "hourly"})
    moment = datetime(2026, 11, 28, 10, 20, tzinfo=UTC)
    base = hourly.next_after(moment)
    starts = [hourly.next_check(moment, f"mon_{n}") for n in range(200)]
    assert all(base <= s < base + timedelta(minutes=5) for s in starts)  # MAX_SPREAD
    assert len({s.second + 60 * s.minute for s in starts}) > 100  # spread, not one second
    assert hourly.next_check(moment, "mon_1") == hourly.next_check(moment, "mon_1")
    # the next one after a jittered start is the schedule's next time, jittered alike
    first = hourly.next_check(moment, "mon_1")
    assert hourly.next_check(first, "mon_1") - first == timedelta(hours=1)
    minutely = Schedule.model_validate({"cron": "* * * * *"})
    assert minutely.next_check(moment, "mon_1") - minutely.next_after(moment) < timedelta(seconds=6)
