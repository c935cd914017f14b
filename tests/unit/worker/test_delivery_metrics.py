"""The worker's messaging metrics, read back through the SDK's in-memory reader: after a known
workload the counters and the histogram hold exactly that workload, with the conventions'
attributes."""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass, replace
from typing import Any

import pytest
from opentelemetry.sdk.metrics.export import InMemoryMetricReader

from scrapejobs_shared.adapters.memory.job_store import MemoryJobStore
from scrapejobs_shared.delivery.enqueue import REVIVALS
from scrapejobs_shared.messaging.task_message import PushedMessage
from scrapejobs_shared.observability.telemetry import telemetry_with
from scrapejobs_shared.ports.fetcher import BlockedDestination, TransientFetchError
from scrapejobs_worker.delivery.delivery_metrics import (
    DeliveryMetrics,
    error_type,
    subscription_name,
)
from scrapejobs_worker.lanes.dead_letters import MAX_REVIVALS
from support.worker_fakes import NOW, PerUrlFetcher, build_processor, push, setup_job

SUBSCRIPTION = "projects/p/subscriptions/scrape-tasks-push"
MESSAGING = {
    "messaging.system": "gcp_pubsub",
    "messaging.destination.subscription.name": "scrape-tasks-push",
}
PROCESS = MESSAGING | {"messaging.operation.name": "process"}
URL = "http://a.example/"


@dataclass
class Recorded:
    reader: InMemoryMetricReader
    metrics: DeliveryMetrics


@pytest.fixture
def recorded() -> Iterator[Recorded]:
    reader = InMemoryMetricReader()
    telemetry = telemetry_with("scrapejobs-worker", metric_readers=[reader])
    yield Recorded(reader, DeliveryMetrics(telemetry.meter("test"), "fallback-sub"))
    telemetry.shutdown()


def points(reader: InMemoryMetricReader, name: str) -> dict[frozenset[tuple[str, Any]], Any]:
    """Data points of a metric by their attributes."""
    data = reader.get_metrics_data()
    found: dict[frozenset[tuple[str, Any]], Any] = {}
    for resource in data.resource_metrics if data else ():
        for scope in resource.scope_metrics:
            for metric in scope.metrics:
                if metric.name == name:
                    for point in metric.data.data_points:
                        found[frozenset((point.attributes or {}).items())] = point
    return found


def attrs(**extra: str) -> frozenset[tuple[str, Any]]:
    return frozenset((MESSAGING | {k.replace("_", "."): v for k, v in extra.items()}).items())


def delivered(batch: Any) -> PushedMessage:
    return replace(push(batch=batch), subscription=SUBSCRIPTION)


async def test_a_known_workload_is_counted_exactly(recorded: Recorded) -> None:
    store = MemoryJobStore()
    batch = await setup_job(store, urls=6)
    fetcher = PerUrlFetcher(
        {
            f"{URL}?n=2": [404],
            f"{URL}?n=3": [404],
            f"{URL}?n=4": [TransientFetchError("slow", reason="timeout"), 200],
            f"{URL}?n=5": [BlockedDestination("metadata server")],
        }
    )
    processor = build_processor(store, fetcher, lambda: NOW, metrics=recorded.metrics)

    first = await processor.handle_push(delivered(batch))
    second = await processor.handle_push(delivered(batch))

    assert not first.ack and second.ack
    tasks = {key: point.value for key, point in points(recorded.reader, "scrapejobs.tasks").items()}
    outcome = "scrapejobs.task.outcome"
    assert tasks == {
        attrs(**{outcome: "succeeded"}): 3,  # t and ?n=1 first, ?n=4 on the redelivery
        attrs(**{outcome: "failed", "error.type": "http_404"}): 2,
        attrs(**{outcome: "failed", "error.type": "blocked_destination"}): 1,
        attrs(**{outcome: "retry", "error.type": "timeout"}): 1,
    }
    durations = points(recorded.reader, "messaging.process.duration")
    nacked = frozenset((PROCESS | {"error.type": "transient_task_failure"}).items())
    assert {key: point.count for key, point in durations.items()} == {
        nacked: 1,
        frozenset(PROCESS.items()): 1,
    }
    assert all(point.sum > 0 for point in durations.values())
    [metric] = [
        m
        for r in recorded.reader.get_metrics_data().resource_metrics  # type: ignore[union-attr]
        for s in r.scope_metrics
        for m in s.metrics
        if m.name == "messaging.process.duration"
    ]
    assert metric.unit == "s"


async def test_dead_letters_and_malformed_messages_are_counted(recorded: Recorded) -> None:
    store = MemoryJobStore()
    batch = await setup_job(store, urls=2)
    processor = build_processor(store, PerUrlFetcher({}), lambda: NOW, metrics=recorded.metrics)

    exhausted = {REVIVALS: str(MAX_REVIVALS)}  # no more returns: the tasks end dead-lettered
    await processor.handle_dead_letter(replace(delivered(batch), attributes=exhausted))
    await processor.handle_push(replace(delivered(batch), data=b"not json"))

    tasks = {key: point.value for key, point in points(recorded.reader, "scrapejobs.tasks").items()}
    dead = {"scrapejobs.task.outcome": "dead_lettered", "error.type": "max_delivery_attempts"}
    assert tasks == {frozenset((MESSAGING | dead).items()): 2}
    durations = points(recorded.reader, "messaging.process.duration")
    malformed = frozenset((PROCESS | {"error.type": "malformed_message"}).items())
    assert {key: point.count for key, point in durations.items()} == {malformed: 1}


async def test_a_push_without_a_subscription_uses_the_setting(recorded: Recorded) -> None:
    store = MemoryJobStore()
    batch = await setup_job(store)
    processor = build_processor(store, PerUrlFetcher({}), lambda: NOW, metrics=recorded.metrics)
    await processor.handle_push(replace(delivered(batch), subscription=""))
    [key] = points(recorded.reader, "scrapejobs.tasks")
    assert ("messaging.destination.subscription.name", "fallback-sub") in key


@pytest.mark.parametrize(
    ("error", "expected"),
    [
        ("HTTP 404", "http_404"),
        ("HTTP 503", "http_503"),
        ("timeout: fetch exceeded its 5s deadline", "timeout"),
        ("blocked_destination: 169.254.169.254 is link-local", "blocked_destination"),
        ("robots_disallowed", "robots_disallowed"),
        ("max_attempts: gave up after 3: HTTP 500", "max_attempts"),
        ("unsupported_content: application/pdf", "unsupported_content"),
        ("throttled: HTTP 429, retry after 10 s", "throttled"),
        ("Something odd happened", "_OTHER"),
        ("", "_OTHER"),
        (None, "_OTHER"),
    ],
)
def test_error_type_is_the_reason_code(error: str | None, expected: str) -> None:
    assert error_type(error) == expected


def test_subscription_name_is_the_short_name() -> None:
    assert subscription_name(SUBSCRIPTION, "x") == "scrape-tasks-push"
    assert subscription_name("scrape-tasks-push", "x") == "scrape-tasks-push"
    assert subscription_name("", "x") == "x"


async def test_the_processing_lane_s_deliveries_are_recorded_like_the_fetch_lane_s(
    recorded: Recorded,
) -> None:
    """Both lanes go through one delivery skeleton (push_delivery.py): the ai stage's lane
    records each push's duration and outcome too (a malformed one, and one whose batch is
    unknown, acked)."""
    from scrapejobs_worker.delivery.push_delivery import BatchPolicy
    from scrapejobs_worker.lanes.processing_lane import ProcessingLane

    store = MemoryJobStore()
    batch = await setup_job(store)
    lane = ProcessingLane(store, None, None, lambda: NOW, BatchPolicy(), metrics=recorded.metrics)
    assert (await lane.handle_push(replace(delivered(batch), data=b"not json"))).ack
    assert (await lane.handle_push(replace(delivered(batch), subscription=SUBSCRIPTION))).ack

    durations = points(recorded.reader, "messaging.process.duration")
    malformed = frozenset((PROCESS | {"error.type": "malformed_message"}).items())
    assert {key: point.count for key, point in durations.items()} == {
        malformed: 1,
        frozenset(PROCESS.items()): 1,
    }
