"""Monitoring and newer endpoints, against their agreed shapes: stats, stats history, health
(UNHEALTHY is a 503 with the health body: returned, not raised), the streamed export, and the
submit options priority and webhook."""

from __future__ import annotations

import json
from collections.abc import Iterator

import httpx
import pytest

from scrapejobs_client import NO_RETRIES, ApiError, Client, RetryPolicy, Webhook
from support.api_samples import HISTORY, JOB, STATS


def recording(answer: httpx.Response, seen: list[httpx.Request], retry=NO_RETRIES) -> Client:
    def handle(request: httpx.Request) -> httpx.Response:
        seen.append(request)
        return answer

    transport = httpx.MockTransport(handle)
    return Client("http://api.test", transport=transport, retry=retry, sleep=lambda _: None)


def test_stats_with_a_window() -> None:
    seen: list[httpx.Request] = []

    stats = recording(httpx.Response(200, json=STATS), seen).stats("1h")

    assert seen[0].url.path == "/v1/stats" and seen[0].url.params["window"] == "1h"
    assert stats.tasks.succeeded == 90 and stats.jobs == {"running": 1, "completed": 7}
    assert stats.processing.p95_ms is None and stats.fetch.p95_ms == 120.0
    assert stats.paused_hosts[0].reason == "breaker" and stats.error_rate == 0.05


def test_stats_history() -> None:
    seen: list[httpx.Request] = []

    history = recording(httpx.Response(200, json=HISTORY), seen).stats_history(hours=6)

    assert seen[0].url.path == "/v1/stats/history" and seen[0].url.params["hours"] == "6"
    assert history.history[0].processed == 100 and history.history[0].success_rate == 0.95


def test_health_unhealthy_is_a_503_that_is_returned() -> None:
    body = {"status": "UNHEALTHY", "reasons": ["firestore: timeout"], "checks": {"fs": {}}}
    seen: list[httpx.Request] = []

    health = recording(httpx.Response(503, json=body), seen).health()

    assert health.status == "UNHEALTHY" and not health.healthy
    assert health.reasons == ["firestore: timeout"] and len(seen) == 1


def test_health_ok_and_degraded() -> None:
    degraded = {"status": "DEGRADED", "reasons": ["backlog growing"], "checks": {}}
    assert recording(httpx.Response(200, json=degraded), []).health().status == "DEGRADED"
    healthy = {"status": "HEALTHY", "reasons": [], "checks": {}}
    assert recording(httpx.Response(200, json=healthy), []).health().healthy


def test_a_503_without_a_health_body_is_retried_then_raised() -> None:
    seen: list[httpx.Request] = []
    retry = RetryPolicy(attempts=2, jitter=lambda: 0.0)
    client = recording(httpx.Response(503, text="Service Unavailable"), seen, retry)

    with pytest.raises(ApiError) as raised:
        client.health()

    assert raised.value.status == 503 and len(seen) == 2


def test_export_streams_the_body() -> None:
    lines = [json.dumps({"url": f"https://shop.test/{n}"}).encode() + b"\n" for n in range(3)]

    def body() -> Iterator[bytes]:
        yield from lines

    seen: list[httpx.Request] = []
    client = recording(httpx.Response(200, content=body()), seen)

    chunks = list(client.export_results("j1", "jsonl"))

    assert b"".join(chunks) == b"".join(lines)
    assert seen[0].url.path == "/v1/jobs/j1/results:export"
    assert seen[0].url.params["format"] == "jsonl"


def test_export_error_is_an_api_error() -> None:
    body = {"error": {"code": "not_found", "message": "job j1 not found"}}
    with pytest.raises(ApiError) as raised:
        list(recording(httpx.Response(404, json=body), []).export_results("j1", "csv"))
    assert raised.value.message == "job j1 not found"


def test_submit_sends_priority_webhook_and_only_what_was_given() -> None:
    seen: list[httpx.Request] = []
    client = recording(httpx.Response(202, json=JOB), seen)
    hook = Webhook(url="https://hooks.test/x", events=["job.completed"], secret="s3")

    job = client.submit(
        ["https://shop.test/1"],
        extract={"title": {"css": "h1::text"}},
        priority="high",
        webhook=hook,
        idempotency_key="key-1",
    )

    assert job.id == "j1" and job.open_tasks == 1 and not job.finished
    sent = json.loads(seen[0].content)
    assert sent == {
        "urls": ["https://shop.test/1"],
        "extract": {"title": {"css": "h1::text"}},
        "priority": "high",
        "webhook": {"url": "https://hooks.test/x", "events": ["job.completed"], "secret": "s3"},
    }
    assert seen[0].headers["idempotency-key"] == "key-1"
    client.submit(url="https://shop.test/2", webhook="https://hooks.test/y")
    assert json.loads(seen[1].content) == {
        "url": "https://shop.test/2",
        "webhook": {"url": "https://hooks.test/y"},
    }
