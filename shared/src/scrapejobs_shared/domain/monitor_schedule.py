"""A monitor's schedule: a five-field cron expression in a time zone, or a few words that say
one ("every 30 minutes", "hourly", "daily at 9:00", "weekly on monday at 8:30"), as
Firecrawl's monitors take them (``{"cron": ..., "timezone": ...}`` or ``{"text": ...}``).

Times are computed in the schedule's zone (cronsim follows daylight saving: a 9:00 check
stays at 9:00 local time) and answered in UTC. The finest schedule is one check a minute.
"""

from __future__ import annotations

import hashlib
import re
from datetime import UTC, datetime, timedelta
from zoneinfo import ZoneInfo, ZoneInfoNotFoundError

from cronsim import CronSim, CronSimError
from pydantic import BaseModel, ConfigDict, Field, field_validator, model_validator

from scrapejobs_shared.errors import InvalidInput

WEEKDAYS = ("sunday", "monday", "tuesday", "wednesday", "thursday", "friday", "saturday")
_AT = r"(?:\s+at\s+(?P<hour>\d{1,2})(?::(?P<minute>\d{2}))?\s*(?P<half>am|pm)?)?"
_DAY = rf"(?P<day>{'|'.join(WEEKDAYS)})s?"
_TEXTS: tuple[tuple[re.Pattern[str], str], ...] = tuple(
    (re.compile(rf"^{pattern}$"), kind)
    for pattern, kind in (
        (r"every\s+minute", "minutes"),
        (r"every\s+(?P<n>\d+)\s+minutes?", "minutes"),
        (r"(?:hourly|every\s+hour)", "hours"),
        (r"every\s+(?P<n>\d+)\s+hours?", "hours"),
        (rf"(?:daily|every\s+day){_AT}", "daily"),
        (rf"(?:weekly|every\s+week)(?:\s+on\s+{_DAY})?{_AT}", "weekly"),
        (rf"(?:every\s+|on\s+){_DAY}{_AT}", "weekly"),
        (rf"(?:monthly|every\s+month){_AT}", "monthly"),
    )
)
TEXT_EXAMPLES = (
    "every minute, every 30 minutes, hourly, every 6 hours, daily, daily at 9:00, "
    "every day at 6pm, weekly, weekly on monday at 8:30, every friday at 17:00, monthly"
)


MAX_SPREAD = timedelta(minutes=5)  # the latest a monitor's check starts after its time


class ScheduleError(InvalidInput):
    """A schedule that cannot be read; the message says why."""


class Schedule(BaseModel):
    """When a monitor checks its pages."""

    model_config = ConfigDict(
        extra="forbid",
        frozen=True,
        # what _one_form enforces, said in the OpenAPI document
        json_schema_extra={
            "oneOf": [
                {"required": [name], "properties": {name: {"type": "string"}}}
                for name in ("cron", "text")
            ]
        },
    )

    cron: str | None = Field(
        default=None,
        max_length=200,
        description="A five-field cron expression (minute hour day-of-month month "
        "day-of-week), e.g. '*/30 * * * *'",
        examples=["*/30 * * * *"],
    )
    text: str | None = Field(
        default=None,
        max_length=200,
        description=f"The schedule in words instead of cron: {TEXT_EXAMPLES}",
        examples=["daily at 9:00"],
    )
    timezone: str = Field(
        default="UTC",
        max_length=64,
        description="An IANA time zone the schedule's times are in, e.g. 'Europe/Paris'",
    )

    @field_validator("timezone")
    @classmethod
    def _known_zone(cls, value: str) -> str:
        zone_of(value)
        return value

    @field_validator("cron")
    @classmethod
    def _valid_cron(cls, value: str | None) -> str | None:
        if value is not None:
            check_cron(value)
        return value

    @field_validator("text")
    @classmethod
    def _valid_text(cls, value: str | None) -> str | None:
        if value is not None:
            cron_of_text(value)
        return value

    @model_validator(mode="after")
    def _one_form(self) -> Schedule:
        if (self.cron is None) == (self.text is None):
            raise ValueError("a schedule has exactly one of 'cron' or 'text'")
        return self

    def expression(self) -> str:
        """The schedule as a cron expression."""
        return self.cron if self.cron is not None else cron_of_text(self.text or "")

    def next_after(self, moment: datetime) -> datetime:
        """The first time the schedule fires strictly after ``moment`` (aware), in UTC."""
        local = moment.astimezone(zone_of(self.timezone)).replace(second=0, microsecond=0)
        return next(iter(CronSim(self.expression(), local))).astimezone(UTC)

    def next_check(self, moment: datetime, key: str) -> datetime:
        """When a monitor keyed ``key`` checks next after ``moment``: the schedule's next time,
        moved later by an offset of the monitor's own (the same every time: a tenth of the
        schedule's interval at most, and at most :data:`MAX_SPREAD`), so the monitors of one
        schedule do not all start at one second."""
        base = self.next_after(moment)
        interval = self.next_after(base) - base
        digest = hashlib.sha256(key.encode()).digest()
        share = int.from_bytes(digest[:8], "big") / 2**64
        spread = min(interval / 10, MAX_SPREAD)
        return base + timedelta(seconds=int(share * spread.total_seconds()))


def zone_of(name: str) -> ZoneInfo:
    try:
        return ZoneInfo(name)
    except (ZoneInfoNotFoundError, ValueError) as exc:
        raise ScheduleError(
            f"unknown time zone {name!r} (an IANA name such as 'Europe/Paris')"
        ) from exc


def check_cron(expression: str) -> None:
    """Raise ``ScheduleError`` unless ``expression`` is a five-field cron expression that
    fires at least once."""
    if len(expression.split()) != 5:
        raise ScheduleError(
            f"{expression!r} is not a five-field cron expression "
            "(minute hour day-of-month month day-of-week)"
        )
    try:
        next(iter(CronSim(expression, datetime(2000, 1, 1, tzinfo=UTC))))
    except (CronSimError, StopIteration) as exc:
        raise ScheduleError(f"{expression!r} is not a valid cron expression: {exc}") from exc


def cron_of_text(text: str) -> str:
    """The cron expression a schedule in words says; ``ScheduleError`` when it says none."""
    words = " ".join(text.lower().split())
    for pattern, kind in _TEXTS:
        match = pattern.match(words)
        if match is not None:
            return _cron(kind, match.groupdict(), text)
    raise ScheduleError(f"{text!r} is not a schedule this API reads; try: {TEXT_EXAMPLES}")


def _cron(kind: str, parts: dict[str, str | None], text: str) -> str:
    if kind in ("minutes", "hours"):
        every = int(parts.get("n") or 1)
        limit = 59 if kind == "minutes" else 23
        if not 1 <= every <= limit:
            raise ScheduleError(f"{text!r}: every 1 to {limit} {kind}")
        step = "*" if every == 1 else f"*/{every}"
        return f"{step} * * * *" if kind == "minutes" else f"0 {step} * * *"
    hour, minute = _time_of_day(parts, text)
    if kind == "daily":
        return f"{minute} {hour} * * *"
    if kind == "monthly":
        return f"{minute} {hour} 1 * *"
    day = WEEKDAYS.index(parts.get("day") or "monday")
    return f"{minute} {hour} * * {day}"


def _time_of_day(parts: dict[str, str | None], text: str) -> tuple[int, int]:
    hour, minute = int(parts.get("hour") or 0), int(parts.get("minute") or 0)
    half = parts.get("half")
    if half is not None:
        if not 1 <= hour <= 12:
            raise ScheduleError(f"{text!r}: an hour with am or pm is 1 to 12")
        hour = hour % 12 + (12 if half == "pm" else 0)
    if hour > 23 or minute > 59:
        raise ScheduleError(f"{text!r}: not a time of day")
    return hour, minute
