"""Cloud Scheduler trigger dedupe: one scheduled run maps to one job id."""

from __future__ import annotations

import re

import pytest

from scrapejobs_dispatcher.scheduling.scheduler_trigger import (
    SchedulerTrigger,
    job_id_for_trigger,
    normalise_schedule_time,
    trigger_from_headers,
)

JOB = "projects/p/locations/europe-west1/jobs/nightly-crawl"
TIME = "2026-01-01T00:00:00Z"


def headers(job: str = JOB, time: str = TIME) -> dict[str, str]:
    return {"X-CloudScheduler-JobName": job, "X-CloudScheduler-ScheduleTime": time}


def job_id(**kwargs: str) -> str:
    trigger = trigger_from_headers(headers(**kwargs))
    assert trigger is not None
    return job_id_for_trigger(trigger, "default")


def test_trigger_is_read_from_headers() -> None:
    assert trigger_from_headers(headers()) == SchedulerTrigger(JOB, TIME)


def test_same_headers_give_the_same_id() -> None:
    assert job_id() == job_id()
    assert re.fullmatch(r"[0-9a-f]{32}", job_id())


def test_header_names_are_case_insensitive() -> None:
    lower = {"x-cloudscheduler-jobname": JOB, "x-cloudscheduler-scheduletime": TIME}
    upper = {key.upper(): value for key, value in lower.items()}
    ids = {job_id_for_trigger(t, "default") for t in map(trigger_from_headers, (lower, upper)) if t}
    assert ids == {job_id()}


@pytest.mark.parametrize(
    "equivalent",
    [
        "2026-01-01T00:00:00.000+00:00",
        "2026-01-01T00:00:00+00:00",
        "2026-01-01T00:00:00.000000000Z",
        "2026-01-01t00:00:00z",
        "2026-01-01 00:00:00Z",
        "2026-01-01T01:00:00+01:00",
        "2025-12-31T19:00:00.0-05:00",
    ],
)
def test_equivalent_schedule_times_give_the_same_id(equivalent: str) -> None:
    assert job_id(time=equivalent) == job_id(time=TIME)


def test_normalised_time_is_utc_isoformat() -> None:
    assert (
        normalise_schedule_time("2026-01-01T01:00:00.5+01:00") == "2026-01-01T00:00:00.500000+00:00"
    )


@pytest.mark.parametrize(
    "other_time",
    [
        "2026-01-01T00:00:01Z",
        "2026-01-01T00:00:00.001Z",
        "2026-01-02T00:00:00Z",
        "2026-01-01T00:00:00+01:00",
    ],
)
def test_different_schedule_times_give_different_ids(other_time: str) -> None:
    assert job_id(time=other_time) != job_id()


def test_different_jobs_give_different_ids() -> None:
    assert job_id(job=JOB + "-2") != job_id()
    assert job_id(job="nightly-crawl") != job_id()


def test_ids_are_distinct_across_many_runs() -> None:
    runs = [(f"job-{j}", f"2026-01-01T{h:02d}:00:00Z") for j in range(10) for h in range(24)]
    ids = {job_id(job=job, time=time) for job, time in runs}
    assert len(ids) == len(runs)


@pytest.mark.parametrize(
    "present",
    [
        {},
        {"X-CloudScheduler-JobName": JOB},
        {"X-CloudScheduler-ScheduleTime": TIME},
        {"X-CloudScheduler": "true", "User-Agent": "Google-Cloud-Scheduler"},
    ],
)
def test_missing_header_gives_none(present: dict[str, str]) -> None:
    assert trigger_from_headers(present) is None


@pytest.mark.parametrize(
    "bad_time",
    [
        "",
        "yesterday",
        "2026-01-01",
        "2026-01-01T00:00:00",  # no offset: not RFC 3339
        "20260101T000000Z",
        "2026-13-01T00:00:00Z",
        "2026-02-30T00:00:00Z",
        "2026-01-01T00:00:60Z",
        "2026-01-01T00:00:00+25:00",
        "2026-01-01T00:00:00.Z",
        "2026-01-01T00:00:00.1234567890Z",
        "1767225600",
    ],
)
def test_malformed_schedule_time_raises(bad_time: str) -> None:
    with pytest.raises(ValueError):
        trigger_from_headers(headers(time=bad_time))


def test_malformed_schedule_time_raises_when_deriving_an_id() -> None:
    with pytest.raises(ValueError):
        job_id_for_trigger(SchedulerTrigger(JOB, "not a time"), "default")


def test_overlong_job_name_raises() -> None:
    assert job_id(job="j" * 500)
    with pytest.raises(ValueError):
        trigger_from_headers(headers(job="j" * 501))


def test_empty_job_name_raises() -> None:
    with pytest.raises(ValueError):
        trigger_from_headers(headers(job="  "))


def test_conflicting_duplicate_headers_raise() -> None:
    duplicated = {**headers(), "x-cloudscheduler-jobname": "other-job"}
    with pytest.raises(ValueError):
        trigger_from_headers(duplicated)


def test_identical_duplicate_headers_are_fine() -> None:
    duplicated = {**headers(), "x-cloudscheduler-jobname": JOB}
    assert trigger_from_headers(duplicated) == SchedulerTrigger(JOB, TIME)


def test_another_tenant_sending_the_same_run_gets_an_id_of_its_own() -> None:
    trigger = SchedulerTrigger(JOB, TIME)
    assert job_id_for_trigger(trigger, "team-a") != job_id_for_trigger(trigger, "team-b")
