"""Idempotent Cloud Scheduler triggers.

Cloud Scheduler may deliver one scheduled run more than once (it retries on failure or
timeout). Each run is identified by two headers it sends: ``X-CloudScheduler-JobName``
and ``X-CloudScheduler-ScheduleTime`` (RFC 3339). :func:`job_id_for_trigger` maps a run
to a deterministic job id, and the dispatcher creates the job under that id; Firestore's
``create()`` fails if the document exists, so a retried trigger finds the job created
by the first delivery instead of submitting it twice.

These headers are not authentication: any caller can set them. The trigger route must
be authenticated on its own (API key or the scheduler's OIDC token).
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Mapping
from dataclasses import dataclass
from datetime import UTC, datetime

JOB_NAME_HEADER = "X-CloudScheduler-JobName"
SCHEDULE_TIME_HEADER = "X-CloudScheduler-ScheduleTime"
MAX_JOB_NAME_LENGTH = 500
JOB_ID_HEX_LENGTH = 32

# RFC 3339 date-time (section 5.6): an explicit offset is mandatory.
_RFC3339 = re.compile(
    r"\d{4}-\d{2}-\d{2}[Tt ]\d{2}:\d{2}:\d{2}(?:\.\d{1,9})?(?:[Zz]|[+-]\d{2}:\d{2})"
)


@dataclass(frozen=True)
class SchedulerTrigger:
    """One scheduled run of a Cloud Scheduler job (schedule time as received)."""

    job_name: str
    schedule_time: str


def trigger_from_headers(headers: Mapping[str, str]) -> SchedulerTrigger | None:
    """Identify the scheduled run from request headers (names are case-insensitive).

    Returns ``None`` when either header is absent (not a Cloud Scheduler request).
    Raises ``ValueError`` for an empty or over-long job name, a malformed schedule
    time, or conflicting duplicate headers.
    """
    job_name = _header(headers, JOB_NAME_HEADER)
    schedule_time = _header(headers, SCHEDULE_TIME_HEADER)
    if job_name is None or schedule_time is None:
        return None
    job_name, schedule_time = job_name.strip(), schedule_time.strip()
    if not job_name:
        raise ValueError(f"{JOB_NAME_HEADER} is empty")
    if len(job_name) > MAX_JOB_NAME_LENGTH:
        raise ValueError(f"{JOB_NAME_HEADER} is longer than {MAX_JOB_NAME_LENGTH} characters")
    normalise_schedule_time(schedule_time)
    return SchedulerTrigger(job_name=job_name, schedule_time=schedule_time)


def job_id_for_trigger(trigger: SchedulerTrigger, tenant: str) -> str:
    """The job id for a scheduled run of ``tenant``: the same run always maps to the same id,
    and another tenant's caller sending the same headers gets an id of its own (it cannot take
    the id of this tenant's next run).

    ``sha256(tenant + "\\n" + job_name + "\\n" + normalised schedule time)``, first 32 hex
    characters (the same shape as the dispatcher's random job ids). Neither a tenant nor the
    normalised time contains a newline, so distinct runs never hash the same input.
    """
    when = normalise_schedule_time(trigger.schedule_time)
    material = f"{tenant}\n{trigger.job_name}\n{when}"
    return hashlib.sha256(material.encode("utf-8")).hexdigest()[:JOB_ID_HEX_LENGTH]


def normalise_schedule_time(value: str) -> str:
    """Parse an RFC 3339 timestamp and return it as a UTC ISO 8601 string.

    ``Z`` and numeric offsets are accepted, fractional seconds beyond microseconds are
    truncated. Equivalent instants normalise identically, e.g. ``2026-01-01T00:00:00Z``
    and ``2026-01-01T01:00:00.000+01:00`` both give ``2026-01-01T00:00:00+00:00``.
    Raises ``ValueError`` if ``value`` is not an RFC 3339 date-time.
    """
    text = value.strip()
    if not _RFC3339.fullmatch(text):
        raise ValueError(f"{SCHEDULE_TIME_HEADER} is not an RFC 3339 timestamp")
    try:
        parsed = datetime.fromisoformat(text.upper().replace("Z", "+00:00"))
    except ValueError as exc:  # e.g. month 13 or a leap second
        raise ValueError(f"{SCHEDULE_TIME_HEADER} is not a valid date-time") from exc
    return parsed.astimezone(UTC).isoformat()


def _header(headers: Mapping[str, str], name: str) -> str | None:
    wanted = name.lower()
    values = {value for key, value in headers.items() if key.lower() == wanted}
    if len(values) > 1:
        raise ValueError(f"conflicting {name} headers")
    return values.pop() if values else None
