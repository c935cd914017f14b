"""The worker's task logic over in-memory adapters and a scripted fetcher."""

from __future__ import annotations

import asyncio
import base64
from collections.abc import Callable
from datetime import UTC, datetime, timedelta

import pytest
from opentelemetry.trace import NoOpTracer

from scrapejobs_shared.jobspec import JobRequest, JobSpec
from scrapejobs_shared.memory_store import MemoryJobStore
from scrapejobs_shared.records import JobRecord, TaskRecord
from scrapejobs_shared.statuses import JobStatus, TaskStatus
from scrapejobs_shared.task_message import PushedMessage, TaskMessage
from scrapejobs_worker.fetch_port import (
    BlockedDestination,
    FetchRequest,
    FetchResponse,
    TransientFetchError,
)
from scrapejobs_worker.page_extraction import extract_outcome
from scrapejobs_worker.task_processor import TaskProcessor

NOW = datetime(2026, 1, 1, tzinfo=UTC)
HTML = b"<html><body><h1>Hello</h1></body></html>"


class ScriptedFetcher:
    def __init__(self, *steps: int | Exception, delay_s: float = 0.0) -> None:
        self.steps = list(steps)
        self.calls: list[FetchRequest] = []
        self.delay_s = delay_s

    async def fetch(self, request: FetchRequest) -> FetchResponse:
        self.calls.append(request)
        await asyncio.sleep(self.delay_s)
        step = self.steps.pop(0) if len(self.steps) > 1 else self.steps[0]
        if isinstance(step, Exception):
            raise step
        headers = {"content-type": "text/html; charset=utf-8"}
        return FetchResponse(request.url, step, headers, HTML, elapsed_ms=5)

    async def aclose(self) -> None:
        return None


async def _setup(store: MemoryJobStore, **options: object) -> TaskRecord:
    request = JobRequest.model_validate(
        {"url": "http://a.example/", "extract": {"h": {"css": "h1::text"}}, "options": options}
    )
    job = JobRecord("j", JobStatus.QUEUED, JobSpec.from_request(request), NOW, NOW, NOW, total=1)
    task = TaskRecord("j", "t", "http://a.example/", TaskStatus.QUEUED, NOW, NOW, NOW)
    await store.create_job(job, [task])
    return task


def _processor(store: MemoryJobStore, fetcher: ScriptedFetcher, clock: Callable[[], datetime]):
    return TaskProcessor(
        store, fetcher, extract_outcome, clock, NoOpTracer(), fetch_timeout_s=5, lease_margin_s=1
    )


def _push(payload: bytes | None = None) -> PushedMessage:
    data = payload or TaskMessage(job_id="j", task_id="t", url="http://a.example/").encode()
    return PushedMessage("m1", data, {}, "sub", None)


@pytest.fixture
def store() -> MemoryJobStore:
    return MemoryJobStore()


async def test_success_records_result_and_completes_job(store) -> None:
    await _setup(store)
    fetcher = ScriptedFetcher(200)
    verdict = await _processor(store, fetcher, lambda: NOW).handle_push(_push())
    assert verdict.ack
    task = store.tasks["j"]["t"]
    assert task.status is TaskStatus.SUCCEEDED and task.data == {"h": "Hello"}
    assert task.attempts == 1 and task.http_status == 200
    assert store.jobs["j"].status is JobStatus.COMPLETED


async def test_transient_failures_retry_then_succeed(store) -> None:
    await _setup(store)
    processor = _processor(
        store, ScriptedFetcher(503, TransientFetchError("reset"), 200), lambda: NOW
    )
    first, second, third = [await processor.handle_push(_push()) for _ in range(3)]
    assert not first.ack and first.reason == "HTTP 503"
    assert not second.ack and "network_error" in second.reason
    assert third.ack and store.tasks["j"]["t"].attempts == 3
    assert store.tasks["j"]["t"].error is None


async def test_permanent_failures_are_recorded_and_acked(store) -> None:
    await _setup(store)
    verdict = await _processor(store, ScriptedFetcher(404), lambda: NOW).handle_push(_push())
    task = store.tasks["j"]["t"]
    assert verdict.ack and task.status is TaskStatus.FAILED and task.error == "HTTP 404"


async def test_blocked_destination_fails_without_retry(store) -> None:
    await _setup(store)
    fetcher = ScriptedFetcher(BlockedDestination("169.254.169.254 is link-local"))
    verdict = await _processor(store, fetcher, lambda: NOW).handle_push(_push())
    assert verdict.ack
    assert store.tasks["j"]["t"].error.startswith("blocked_destination")


async def test_max_attempts_option_gives_up(store) -> None:
    await _setup(store, max_attempts=2)
    processor = _processor(store, ScriptedFetcher(500), lambda: NOW)
    assert not (await processor.handle_push(_push())).ack
    assert (await processor.handle_push(_push())).ack
    task = store.tasks["j"]["t"]
    assert task.status is TaskStatus.FAILED and task.attempts == 2
    assert task.error == "max_attempts: gave up after 2: HTTP 500"


async def test_redelivery_after_success_is_a_no_op(store) -> None:
    await _setup(store)
    fetcher = ScriptedFetcher(200)
    processor = _processor(store, fetcher, lambda: NOW)
    await processor.handle_push(_push())
    assert (await processor.handle_push(_push())).ack
    assert (await processor.handle_dead_letter(_push())).ack
    assert len(fetcher.calls) == 1 and store.tasks["j"]["t"].status is TaskStatus.SUCCEEDED


async def test_concurrent_duplicate_waits_for_the_owner(store) -> None:
    await _setup(store)
    fetcher = ScriptedFetcher(200, delay_s=0.2)
    processor = _processor(store, fetcher, lambda: datetime.now(UTC))
    verdicts = await asyncio.gather(processor.handle_push(_push()), processor.handle_push(_push()))
    assert all(v.ack for v in verdicts) and len(fetcher.calls) == 1


async def test_expired_lease_is_taken_over(store) -> None:
    await _setup(store)
    clock = [NOW]
    processor = _processor(store, ScriptedFetcher(200), lambda: clock[0])
    await store.claim_task("j", "t", NOW, NOW + timedelta(seconds=6))  # a crashed delivery
    clock[0] = NOW + timedelta(seconds=7)
    assert (await processor.handle_push(_push())).ack
    assert store.tasks["j"]["t"].attempts == 2


async def test_cancelled_job_tasks_are_not_fetched(store) -> None:
    await _setup(store)
    await store.set_job_status("j", JobStatus.CANCELLED, NOW)
    fetcher = ScriptedFetcher(200)
    assert (await _processor(store, fetcher, lambda: NOW).handle_push(_push())).ack
    assert fetcher.calls == [] and store.tasks["j"]["t"].status is TaskStatus.CANCELLED


async def test_dead_letter_keeps_last_error(store) -> None:
    await _setup(store)
    processor = _processor(store, ScriptedFetcher(500), lambda: NOW)
    await processor.handle_push(_push())
    assert (await processor.handle_dead_letter(_push())).ack
    task = store.tasks["j"]["t"]
    assert task.status is TaskStatus.DEAD_LETTERED and task.error == "HTTP 500"
    assert store.jobs["j"].status is JobStatus.COMPLETED


@pytest.mark.parametrize("payload", [b"{}", b"garbage", base64.b64encode(b"x")])
async def test_malformed_payload_is_recorded_and_acked(store, payload) -> None:
    verdict = await _processor(store, ScriptedFetcher(200), lambda: NOW).handle_push(_push(payload))
    assert verdict.ack and len(store.rejected) == 1


async def test_unknown_task_is_acked(store) -> None:
    verdict = await _processor(store, ScriptedFetcher(200), lambda: NOW).handle_push(_push())
    assert verdict.ack and verdict.reason == "unknown task"
