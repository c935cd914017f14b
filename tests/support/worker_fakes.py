"""In-memory wiring of the worker's TaskProcessor, with a scripted fetcher."""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from datetime import UTC, datetime
from typing import Any

from opentelemetry.trace import NoOpTracer

from scrapejobs_shared.adapters.memory.host_gate import MemoryHostGate
from scrapejobs_shared.adapters.memory.job_store import MemoryJobStore
from scrapejobs_shared.adapters.memory.publisher import MemoryTaskPublisher
from scrapejobs_shared.domain.jobspec import JobRequest, JobSpec
from scrapejobs_shared.domain.records import JobRecord, TaskRecord
from scrapejobs_shared.domain.statuses import JobStatus, TaskStatus
from scrapejobs_shared.messaging.task_message import PushedMessage, TaskMessage
from scrapejobs_worker.fetch_port import FetchRequest, FetchResponse
from scrapejobs_worker.page_extraction import extract_outcome
from scrapejobs_worker.politeness import Politeness, PolitenessPolicy
from scrapejobs_worker.robots_cache import RobotsCache
from scrapejobs_worker.task_processor import ProcessorPolicy, TaskProcessor

NOW = datetime(2026, 1, 1, tzinfo=UTC)
HTML = b"<html><body><h1>Hello</h1><a href='/next'>n</a></body></html>"
Step = int | Exception | tuple[int, dict[str, str]]


class ScriptedFetcher:
    """Answers each page fetch with the next step (the last one repeats); robots.txt is
    ``robots`` (a status and body) and is not recorded in ``calls``."""

    def __init__(
        self, *steps: Step, delay_s: float = 0.0, robots: tuple[int, bytes] = (404, b"")
    ) -> None:
        self.steps = list(steps)
        self.calls: list[FetchRequest] = []
        self.delay_s = delay_s
        self.robots = robots

    async def fetch(self, request: FetchRequest) -> FetchResponse:
        if request.url.endswith("/robots.txt"):
            return FetchResponse(request.url, self.robots[0], {}, self.robots[1], elapsed_ms=1)
        self.calls.append(request)
        await asyncio.sleep(self.delay_s)
        step = self.steps.pop(0) if len(self.steps) > 1 else self.steps[0]
        if isinstance(step, Exception):
            raise step
        status, extra = step if isinstance(step, tuple) else (step, {})
        headers = {"content-type": "text/html; charset=utf-8", **extra}
        return FetchResponse(request.url, status, headers, HTML, elapsed_ms=5)

    async def aclose(self) -> None:
        return None


async def setup_job(store: MemoryJobStore, body: dict[str, Any] | None = None) -> TaskRecord:
    request = JobRequest.model_validate(
        body or {"url": "http://a.example/", "extract": {"h": {"css": "h1::text"}}}
    )
    job = JobRecord("j", JobStatus.QUEUED, JobSpec.from_request(request), NOW, NOW, NOW, total=1)
    url = request.target_urls()[0]
    task = TaskRecord("j", "t", url, TaskStatus.QUEUED, NOW, NOW, NOW)
    await store.create_job(job, [task])
    return task


def build_processor(
    store: MemoryJobStore,
    fetcher: ScriptedFetcher,
    clock: Callable[[], datetime],
    *,
    gate: MemoryHostGate | None = None,
    publisher: MemoryTaskPublisher | None = None,
    politeness: PolitenessPolicy | None = None,
) -> TaskProcessor:
    polite = Politeness(
        gate or MemoryHostGate(),
        RobotsCache(fetcher),
        politeness or PolitenessPolicy(max_wait_s=0.0),
        clock,
    )
    return TaskProcessor(
        store,
        fetcher,
        extract_outcome,
        polite,
        publisher or MemoryTaskPublisher(),
        clock,
        NoOpTracer(),
        ProcessorPolicy(fetch_timeout_s=5, lease_margin_s=1),
    )


def push(payload: bytes | None = None, **attributes: str) -> PushedMessage:
    data = payload or TaskMessage(job_id="j", task_id="t", url="http://a.example/").encode()
    return PushedMessage("m1", data, attributes, "sub", None)
