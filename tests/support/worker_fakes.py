"""In-memory wiring of the worker's BatchProcessor, with a scripted fetcher."""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from datetime import UTC, datetime
from typing import Any

from opentelemetry.metrics import NoOpMeter
from opentelemetry.trace import NoOpTracer

from scrapejobs_shared.adapters.memory.budgeted_work import InlineWork
from scrapejobs_shared.adapters.memory.host_gate import MemoryHostGate
from scrapejobs_shared.adapters.memory.job_store import MemoryJobStore
from scrapejobs_shared.adapters.memory.publisher import MemoryTaskPublisher
from scrapejobs_shared.delivery.enqueue import Enqueuer
from scrapejobs_shared.delivery.job_events import JobEvents
from scrapejobs_shared.domain.jobspec import JobRequest, JobSpec
from scrapejobs_shared.domain.records import BatchItem, BatchRecord, JobRecord
from scrapejobs_shared.domain.statuses import JobStatus
from scrapejobs_shared.messaging.task_message import BatchMessage, PushedMessage, TaskRef
from scrapejobs_shared.politeness.admission import Politeness, PolitenessPolicy
from scrapejobs_shared.politeness.robots_cache import RobotsCache
from scrapejobs_shared.ports.budgeted_work import Budget
from scrapejobs_shared.ports.fetcher import FetchRequest, FetchResponse, PermanentFetchError
from scrapejobs_shared.ports.held_batches import HeldBatches
from scrapejobs_shared.ports.page_cache import PageCache
from scrapejobs_worker.batches.held_chain import HeldChain
from scrapejobs_worker.batches.page_reuse import PageReuse
from scrapejobs_worker.batches.worker_heartbeat import WorkerHeartbeat
from scrapejobs_worker.crawl.crawl_expansion import CrawlExpansion, LinkFilter
from scrapejobs_worker.delivery.delivery_metrics import DeliveryMetrics
from scrapejobs_worker.delivery.push_delivery import BatchPolicy
from scrapejobs_worker.extraction.extraction_processes import ExtractionInProcess
from scrapejobs_worker.extraction.stage_work import StageWork
from scrapejobs_worker.lanes.batch_processor import BatchProcessor, Companions
from scrapejobs_worker.tasks.fetch_admissions import fetch_admissions
from scrapejobs_worker.tasks.task_runner import RunnerPolicy, TaskRunner
from scrapejobs_worker.tasks.tenant_caps import TenantCaps

NOW = datetime(2026, 1, 1, tzinfo=UTC)
LINKS_BUDGET = Budget("crawl's link filter", "SCRAPEJOBS_LINKS_BUDGET_S", 5.0)
STAGES_BUDGET = Budget("answer's check and later stages", "SCRAPEJOBS_EXTRACTION_BUDGET_S", 10.0)
HTML = b"<html><body><h1>Hello</h1><a href='/next'>n</a></body></html>"
Step = int | Exception | tuple[int, dict[str, str]]


class ScriptedFetcher:
    """Answers each page fetch with the next step (the last one repeats); robots.txt is
    ``robots`` (a status and body) and is not recorded in ``calls``."""

    def __init__(
        self,
        *steps: Step,
        delay_s: float = 0.0,
        robots: tuple[int, bytes] = (404, b""),
        failing_certificate: bool = False,
    ) -> None:
        """``failing_certificate``: the site's certificate fails verification (a page is a
        ``tls_error`` unless its request turns verification off, then ``tls_unverified``)."""
        self.steps = list(steps)
        self.calls: list[FetchRequest] = []
        self.delay_s = delay_s
        self.robots = robots
        self.failing_certificate = failing_certificate

    async def fetch(self, request: FetchRequest) -> FetchResponse:
        if request.url.endswith("/robots.txt"):
            return FetchResponse(request.url, self.robots[0], {}, self.robots[1], elapsed_ms=1)
        self.calls.append(request)
        await asyncio.sleep(self.delay_s)
        step = self.steps.pop(0) if len(self.steps) > 1 else self.steps[0]
        if isinstance(step, Exception):
            raise step
        if self.failing_certificate and request.route.verify_tls:
            raise PermanentFetchError("certificate verify failed", reason="tls_error")
        status, extra = step if isinstance(step, tuple) else (step, {})
        headers = {"content-type": "text/html; charset=utf-8", **extra}
        unverified = self.failing_certificate
        return FetchResponse(
            request.url, status, headers, HTML, elapsed_ms=5, tls_unverified=unverified
        )

    async def aclose(self) -> None:
        return None


async def setup_job(
    store: MemoryJobStore,
    body: dict[str, Any] | None = None,
    urls: int = 1,
    job_id: str = "j",
    tenant: str = "default",
) -> BatchRecord:
    """Job ``job_id`` with one batch ``b`` of ``urls`` tasks ``t``, ``t1``, ``t2``... of the body's
    URL (with ``?n=`` for the others)."""
    request = JobRequest.model_validate(
        body or {"url": "http://a.example/", "extract": {"h": {"css": "h1::text"}}}
    )
    job = JobRecord(
        job_id,
        JobStatus.QUEUED,
        JobSpec.from_request(request),
        NOW,
        NOW,
        NOW,
        total=urls,
        tenant=tenant,
    )
    url = request.target_urls()[0]
    items = tuple(
        BatchItem("t" if n == 0 else f"t{n}", url if n == 0 else f"{url}?n={n}", index=n)
        for n in range(urls)
    )
    batch = BatchRecord(job_id, "b", items, NOW, NOW, tenant=tenant)
    await store.create_job(job, [batch])
    return batch


def inline_stages() -> StageWork:
    """The ai stage's check and later stages in a thread (the budgeted processes' twin)."""
    return StageWork(InlineWork(), STAGES_BUDGET)


def build_processor(
    store: MemoryJobStore,
    fetcher: ScriptedFetcher,
    clock: Callable[[], datetime],
    *,
    gate: MemoryHostGate | None = None,
    publisher: MemoryTaskPublisher | None = None,
    politeness: PolitenessPolicy | None = None,
    runner: RunnerPolicy | None = None,
    batch: BatchPolicy | None = None,
    metrics: DeliveryMetrics | None = None,
    events: JobEvents | None = None,
    page_cache: PageCache | None = None,
    held: HeldBatches | None = None,
    links: LinkFilter | None = None,
    heartbeat: WorkerHeartbeat | None = None,
) -> BatchProcessor:
    polite = Politeness(
        gate or MemoryHostGate(),
        RobotsCache(fetcher),
        politeness or PolitenessPolicy(max_wait_s=0.0),
        clock,
    )
    enqueuer = Enqueuer(store, publisher or MemoryTaskPublisher(), clock, NoOpTracer())
    policy = runner or RunnerPolicy(fetch_timeout_s=5, lease_margin_s=1)
    tasks = TaskRunner(
        fetcher,
        ExtractionInProcess(),
        polite,
        CrawlExpansion(
            store,
            HeldChain(held, enqueuer, clock),
            clock,
            links or LinkFilter(InlineWork(), LINKS_BUDGET),
        ),
        clock,
        NoOpTracer(),
        policy,
        fetch_admissions(TenantCaps(None, 0), polite, policy.permit_lease),
    )
    return BatchProcessor(
        store,
        tasks,
        enqueuer,
        clock,
        NoOpTracer(),
        metrics or DeliveryMetrics(NoOpMeter("tests"), "scrape-tasks-push"),
        batch or BatchPolicy(lease_s=6),
        Companions(
            events, heartbeat=heartbeat, reuse=PageReuse(page_cache, store, clock), held=held
        ),
    )


def push(
    payload: bytes | None = None, batch: BatchRecord | None = None, **attributes: str
) -> PushedMessage:
    if payload is None:
        refs = (
            tuple(TaskRef(id=i.task_id, url=i.url) for i in batch.items)
            if batch is not None
            else (TaskRef(id="t", url="http://a.example/"),)
        )
        job_id = batch.job_id if batch is not None else "j"
        tenant = batch.tenant if batch is not None else "default"  # as the enqueuer sends it
        payload = BatchMessage(job_id=job_id, batch_id="b", tasks=refs, tenant=tenant).encode()
    return PushedMessage("m1", payload, attributes, "sub", None)


class PerUrlFetcher(ScriptedFetcher):
    """Each URL answers with its own steps (the last one repeats; 200 when it has none);
    ``max_in_flight`` records the most page fetches in flight at once."""

    def __init__(self, steps: dict[str, list[Step]], delay_s: float = 0.0) -> None:
        super().__init__(200, delay_s=delay_s)
        self.by_url = {url: list(s) for url, s in steps.items()}
        self.in_flight = 0
        self.max_in_flight = 0

    async def fetch(self, request: FetchRequest) -> FetchResponse:
        if request.url.endswith("/robots.txt"):
            return await super().fetch(request)
        self.calls.append(request)
        steps = self.by_url.get(request.url, [200])
        step = steps.pop(0) if len(steps) > 1 else steps[0]
        self.in_flight += 1
        self.max_in_flight = max(self.max_in_flight, self.in_flight)
        try:
            await asyncio.sleep(self.delay_s)
        finally:
            self.in_flight -= 1
        if isinstance(step, Exception):
            raise step
        if self.failing_certificate and request.route.verify_tls:
            raise PermanentFetchError("certificate verify failed", reason="tls_error")
        status, extra = step if isinstance(step, tuple) else (step, {})
        headers = {"content-type": "text/html; charset=utf-8", **extra}
        unverified = self.failing_certificate
        return FetchResponse(
            request.url, status, headers, HTML, elapsed_ms=5, tls_unverified=unverified
        )
