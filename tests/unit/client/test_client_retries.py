"""Retries: 429 and 503 are tried again after Retry-After (seconds or an HTTP date), else after
an exponential backoff; connection errors too; other errors and over-long waits are not."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from email.utils import format_datetime

import httpx
import pytest

from scrapejobs_client import ApiError, ApiUnreachable, Client, RetryPolicy
from scrapejobs_client.retries import retry_after_seconds

JOB = {
    "id": "j1",
    "status": "running",
    "created_at": "2026-01-01T00:00:00Z",
    "updated_at": "2026-01-01T00:00:01Z",
    "labels": {},
    "kind": "urls",
    "total": 2,
    "counts": {"queued": 1, "running": 1},
}
NO_JITTER = RetryPolicy(jitter=lambda: 1.0)


def scripted(
    *answers: httpx.Response | Exception,
) -> tuple[httpx.MockTransport, list[httpx.Request]]:
    """A transport answering each request with the next answer (an exception is raised)."""
    seen: list[httpx.Request] = []
    queue = list(answers)

    def handle(request: httpx.Request) -> httpx.Response:
        seen.append(request)
        answer = queue.pop(0)
        if isinstance(answer, Exception):
            raise answer
        return answer

    return httpx.MockTransport(handle), seen


def client_with(transport: httpx.MockTransport, sleeps: list[float], **kwargs) -> Client:
    kwargs.setdefault("retry", NO_JITTER)
    return Client("http://api.test", transport=transport, sleep=sleeps.append, **kwargs)


def test_429_and_503_wait_for_retry_after_seconds() -> None:
    transport, seen = scripted(
        httpx.Response(429, headers={"Retry-After": "3"}, json={"error": {"message": "slow"}}),
        httpx.Response(503, headers={"Retry-After": "1"}),
        httpx.Response(200, json=JOB),
    )
    sleeps: list[float] = []

    job = client_with(transport, sleeps).get_job("j1")

    assert job.id == "j1" and len(seen) == 3
    assert sleeps == [3.0, 1.0]


def test_retry_after_as_an_http_date() -> None:
    now = datetime(2026, 1, 1, 12, 0, 0, tzinfo=UTC)
    assert retry_after_seconds(format_datetime(now + timedelta(seconds=7), usegmt=True), now) == 7
    assert retry_after_seconds(format_datetime(now - timedelta(seconds=7), usegmt=True), now) == 0
    assert retry_after_seconds("soon", now) is None and retry_after_seconds(None) is None
    assert retry_after_seconds(" 12 ") == 12


def test_without_retry_after_the_backoff_doubles_up_to_the_cap() -> None:
    transport, _ = scripted(*[httpx.Response(503) for _ in range(5)], httpx.Response(200, json=JOB))
    sleeps: list[float] = []
    policy = RetryPolicy(attempts=6, base_delay_s=0.5, max_delay_s=3.0, jitter=lambda: 1.0)

    client_with(transport, sleeps, retry=policy).get_job("j1")

    assert sleeps == [0.5, 1.0, 2.0, 3.0, 3.0]


def test_jitter_scales_the_backoff_between_half_and_all_of_it() -> None:
    assert RetryPolicy(base_delay_s=2.0, jitter=lambda: 0.0).backoff(1) == 2.0
    assert RetryPolicy(base_delay_s=2.0, jitter=lambda: 0.5).backoff(1) == 3.0


def test_gives_up_after_the_attempts_with_the_api_error() -> None:
    busy = {"error": {"code": "busy", "message": "try later"}}
    transport, seen = scripted(*[httpx.Response(503, json=busy) for _ in range(3)])
    sleeps: list[float] = []

    with pytest.raises(ApiError) as raised:
        client_with(transport, sleeps, retry=RetryPolicy(attempts=3, jitter=lambda: 1.0)).get_job(
            "j1"
        )

    assert raised.value.status == 503 and raised.value.message == "try later"
    assert len(seen) == 3 and len(sleeps) == 2


def test_a_retry_after_longer_than_the_limit_is_raised_at_once() -> None:
    transport, seen = scripted(httpx.Response(429, headers={"Retry-After": "3600"}))
    sleeps: list[float] = []

    with pytest.raises(ApiError) as raised:
        client_with(transport, sleeps).get_job("j1")

    assert raised.value.status == 429 and sleeps == [] and len(seen) == 1


@pytest.mark.parametrize("status", [400, 401, 404, 409, 422, 500])
def test_other_errors_are_not_retried(status: int) -> None:
    transport, seen = scripted(httpx.Response(status, json={"error": {"message": "no"}}))
    sleeps: list[float] = []

    with pytest.raises(ApiError):
        client_with(transport, sleeps).get_job("j1")

    assert len(seen) == 1 and sleeps == []


def test_connection_errors_are_retried_then_reported() -> None:
    refused = httpx.ConnectError("connection refused")
    transport, seen = scripted(refused, httpx.ReadTimeout("slow"), httpx.Response(200, json=JOB))
    sleeps: list[float] = []
    assert client_with(transport, sleeps).get_job("j1").id == "j1"
    assert sleeps == [0.5, 1.0]

    transport, seen = scripted(*[refused] * 5)
    with pytest.raises(ApiUnreachable) as raised:
        client_with(transport, []).get_job("j1")
    assert len(seen) == 5 and "connection refused" in str(raised.value)
    assert "http://api.test" in str(raised.value)


def test_a_retried_submission_keeps_its_idempotency_key() -> None:
    in_flight = {"error": {"code": "idempotency_key_in_flight", "message": "retry later"}}
    transport, seen = scripted(
        httpx.ConnectError("reset"),
        httpx.Response(409, json=in_flight),
        httpx.Response(202, json=JOB),
    )

    job = client_with(transport, []).submit(["https://example.com/"])

    assert job.id == "j1"
    keys = {request.headers["idempotency-key"] for request in seen}
    assert len(seen) == 3 and len(keys) == 1 and keys.pop().startswith("scrapejobs-client-")


def test_a_conflict_that_is_not_an_in_flight_key_is_not_retried() -> None:
    finished = {"error": {"code": "job_finished", "message": "job j1 has already completed"}}
    transport, seen = scripted(httpx.Response(409, json=finished))

    with pytest.raises(ApiError) as raised:
        client_with(transport, []).cancel("j1")

    assert raised.value.code == "job_finished" and len(seen) == 1
