"""Composition root of the worker: ``create_app(settings)``; ``app_from_env`` for uvicorn."""

from __future__ import annotations

import asyncio
import contextlib
import functools
import logging
import os
from collections.abc import AsyncIterator
from contextlib import AsyncExitStack, asynccontextmanager
from typing import Any

import httpx
from fastapi import FastAPI, Request
from fastapi.responses import JSONResponse

from scrapejobs_shared.delivery.enqueue import Enqueuer
from scrapejobs_shared.delivery.job_events import JobEvents
from scrapejobs_shared.domain.clock import Clock, utc_now
from scrapejobs_shared.domain.lanes import PROCESSING_LANE
from scrapejobs_shared.observability.json_logging import configure_logging
from scrapejobs_shared.observability.telemetry import Telemetry, telemetry_for
from scrapejobs_shared.outcomes.page_outcome import extract_outcome
from scrapejobs_shared.politeness.admission import Politeness, PolitenessPolicy
from scrapejobs_shared.politeness.host_gate import BreakerPolicy, HostGate
from scrapejobs_shared.politeness.robots_cache import RobotsCache
from scrapejobs_shared.politeness.warm_slot_gate import WarmSlotGate, WarmSlotPolicy
from scrapejobs_shared.ports.answer_cache import AnswerCache
from scrapejobs_shared.ports.budgeted_work import BudgetedWork
from scrapejobs_shared.ports.dependency_unavailable import DependencyUnavailable
from scrapejobs_shared.ports.fetcher import Fetcher
from scrapejobs_shared.ports.job_store import LaneStore
from scrapejobs_web.http_errors import install_http_error_handlers, unavailable_response
from scrapejobs_worker.adapters import Adapters, Overrides
from scrapejobs_worker.ai.ai_answers import AiAnswers
from scrapejobs_worker.ai.model_port import LanguageModel
from scrapejobs_worker.ai.model_slots import ModelSlots
from scrapejobs_worker.batches.held_chain import HeldChain
from scrapejobs_worker.batches.page_reuse import PageReuse
from scrapejobs_worker.batches.worker_heartbeat import WorkerHeartbeat
from scrapejobs_worker.crawl.crawl_expansion import CrawlExpansion, LinkFilter
from scrapejobs_worker.delivery.delivery_metrics import DeliveryMetrics
from scrapejobs_worker.delivery.push_auth import CachedJwks, KeySource, PushAuthPolicy
from scrapejobs_worker.delivery.push_delivery import BatchPolicy
from scrapejobs_worker.delivery.push_guard import PushGuard
from scrapejobs_worker.extraction.documents_apart import DocumentsApart
from scrapejobs_worker.extraction.extraction_processes import (
    ExtractionInProcess,
    ExtractionProcesses,
)
from scrapejobs_worker.extraction.stage_work import StageWork
from scrapejobs_worker.fetching import FetchPolicy, SafeFetcher, build_fetcher
from scrapejobs_worker.fetching.proxy_routes import OWN_ROUTE
from scrapejobs_worker.lanes.batch_processor import BatchProcessor, Companions
from scrapejobs_worker.lanes.lane_table import LaneTable
from scrapejobs_worker.lanes.processing_lane import ProcessingLane
from scrapejobs_worker.lanes.webhook_sender import WebhookPolicy, WebhookSender
from scrapejobs_worker.language_models.openai_chat import OpenAIChatModel
from scrapejobs_worker.language_models.vertex_gemini import VertexGeminiModel
from scrapejobs_worker.rendering.kept_files import KeptFiles
from scrapejobs_worker.rendering.rendering_fetcher import RenderingFetcher
from scrapejobs_worker.routes import health, pubsub
from scrapejobs_worker.settings import WorkerSettings
from scrapejobs_worker.tasks.fetch_admissions import fetch_admissions
from scrapejobs_worker.tasks.task_runner import RunnerPolicy, TaskRunner
from scrapejobs_worker.tasks.tenant_caps import TenantCaps

log = logging.getLogger(__name__)
SERVICE = "scrapejobs-worker"


def fetch_policy(settings: WorkerSettings) -> FetchPolicy:
    return FetchPolicy(
        allowlist=tuple(settings.fetch_allowlist),
        refused_ports=tuple(settings.fetch_refused_ports),
        max_body_bytes=settings.max_body_bytes,
        user_agent=settings.user_agent,
        allow_unverified_tls=settings.allow_unverified_tls,
        proxies=settings.proxy_pool(),
        proxy_sticky=settings.proxy_sticky,
    )


def push_guard(settings: WorkerSettings, keys: KeySource | None) -> PushGuard:
    if settings.push_auth == "none":
        return PushGuard(None, None)
    policy = PushAuthPolicy(
        audience=settings.push_audience,
        service_account_email=settings.push_service_account,
        verify_signature=settings.push_verify_signature,
    )
    if keys is None and settings.push_verify_signature:
        keys = CachedJwks(lambda: _fetch_jwks(settings.push_jwks_url))
    return PushGuard(policy, keys)


def _fetch_jwks(url: str) -> dict[str, Any]:
    response = httpx.get(url, timeout=10, trust_env=False)
    response.raise_for_status()
    document: dict[str, Any] = response.json()
    return document


async def _unavailable(_: Request, exc: Exception) -> JSONResponse:
    """A push that met a dependency outage is nacked at once: Pub/Sub redelivers it with
    backoff, and what the batch finished before is kept (its commits landed or are retried)."""
    assert isinstance(exc, DependencyUnavailable)
    log.warning("dependency unavailable", extra={"dependency": exc.dependency})
    return unavailable_response(exc.dependency, str(exc), exc.timeout_s)


def _processing_lane(
    settings: WorkerSettings,
    job_store: LaneStore,
    model: LanguageModel | None,
    gate: HostGate,
    events: JobEvents,
    answer_cache: AnswerCache | None,
    metrics: DeliveryMetrics,
    work: BudgetedWork,
) -> ProcessingLane:
    """The lane of the ai stage (without a model configured, its tasks wait: see
    ProcessingLane)."""
    stages = StageWork(work, settings.stages_budget())
    return ProcessingLane(
        job_store,
        AiAnswers(model, settings.ai_model, stages) if model is not None else None,
        ModelSlots(gate, model.provider, settings.ai_max_in_flight, utc_now, settings.ai_timeout_s)
        if model is not None
        else None,
        utc_now,
        batch_policy(settings),
        events,
        answer_cache,
        metrics,
    )


def _log_choices(settings: WorkerSettings) -> None:
    if settings.render_browser_path:
        log.info("rendering enabled", extra={"browser": settings.render_browser_path})
    if settings.fetch_allowlist:
        log.warning("fetch allowlist set", extra={"allowlist": settings.fetch_allowlist})


def create_app(
    settings: WorkerSettings,
    overrides: Overrides | None = None,
    telemetry: Telemetry | None = None,
) -> FastAPI:
    """Build the app: Firestore, Pub/Sub, the SSRF-safe fetcher, Google's JWKS and the
    telemetry the settings choose, but those ``overrides`` gives (tests; the caller then shuts
    down the telemetry it gave)."""
    given = overrides or {}

    @asynccontextmanager
    async def lifespan(app: FastAPI) -> AsyncIterator[None]:
        async with AsyncExitStack() as stack:
            telemetry_used = telemetry or telemetry_for(SERVICE, settings)
            if telemetry is None:
                stack.callback(telemetry_used.shutdown)
            parts = Adapters(settings, given, stack)
            await _serve(app, settings, parts, stack, telemetry_used)
            log.info("worker ready", extra={"project": settings.project_id})
            yield

    app = FastAPI(title="scrapejobs worker", version="0.1.0", lifespan=lifespan)
    app.state.push_guard = push_guard(settings, given.get("push_keys"))
    install_http_error_handlers(app)
    app.add_exception_handler(DependencyUnavailable, _unavailable)
    app.include_router(health.router)
    app.include_router(pubsub.router)
    return app


async def _serve(
    app: FastAPI,
    settings: WorkerSettings,
    parts: Adapters,
    stack: AsyncExitStack,
    telemetry: Telemetry,
) -> None:
    """The lanes the push routes hand deliveries to (``app.state``), on ``parts``; each
    part that needs stopping is stopped with ``stack``, the last made first."""
    clock = utc_now
    tracer = telemetry.tracer(SERVICE)
    job_store = parts.store
    # model slots take the shared gate as it is: a call lasts seconds, so a store round
    # trip per call costs nothing, and a slot kept warm would only be idle in one process
    host_gate = warm_slots(settings, parts.gate, clock)
    if isinstance(host_gate, WarmSlotGate):
        stack.push_async_callback(host_gate.close)
    tenant_proxies = parts.tenant_proxies if settings.tenant_proxies else None
    plain_fetcher = parts.fetcher or build_fetcher(fetch_policy(settings), tenant_proxies)
    rendered = renderer(settings, plain_fetcher)
    if rendered is not None:  # its screenshots kept in the tenant's file store
        rendered = KeptFiles(rendered, parts.file_store, settings.api_url)
    page_fetcher = RenderingFetcher(plain_fetcher, rendered)
    stack.push_async_callback(page_fetcher.aclose)
    politeness = Politeness(
        host_gate, RobotsCache(plain_fetcher), politeness_policy(settings), clock
    )
    events = JobEvents(job_store, parts.webhook_outbox)
    enqueuer = Enqueuer(job_store, parts.publisher, clock, tracer, events)
    extraction = _extraction(settings)
    await extraction.start()
    stack.push_async_callback(extraction.close)
    policy = runner_policy(settings)
    caps = TenantCaps(parts.tenant_quotas, settings.tenant_pages_in_flight)
    runner = TaskRunner(
        page_fetcher,
        extraction,
        politeness,
        CrawlExpansion(
            job_store,
            HeldChain(parts.held_batches, enqueuer, clock),
            clock,
            LinkFilter(parts.budgeted_work, settings.links_budget()),
        ),
        clock,
        tracer,
        policy,
        fetch_admissions(caps, politeness, policy.permit_lease),
    )
    revision = os.environ.get("K_REVISION", "local")  # Cloud Run names the revision
    heartbeat = WorkerHeartbeat(
        parts.worker_directory,
        clock,
        revision,
        every_s=settings.worker_report_s,
        proxies=plain_fetcher.proxy_use if isinstance(plain_fetcher, SafeFetcher) else tuple,
    )
    metrics = DeliveryMetrics(telemetry.meter(SERVICE), settings.task_subscription)
    app.state.processor = processor = BatchProcessor(
        job_store,
        runner,
        enqueuer,
        clock,
        tracer,
        metrics,
        batch_policy(settings),
        Companions(
            events, heartbeat, PageReuse(parts.page_cache, job_store, clock), parts.held_batches
        ),
    )
    stack.push_async_callback(processor.close)  # before the publisher closes
    model = parts.language_model or build_language_model(settings)
    if model is not None and parts.language_model is None:
        stack.push_async_callback(model.aclose)
    processing = _processing_lane(
        settings,
        job_store,
        model,
        parts.gate,
        events,
        parts.answer_cache,
        metrics,
        parts.budgeted_work,
    )
    app.state.lanes = LaneTable(processor, {PROCESSING_LANE: processing})
    app.state.webhooks = WebhookSender(
        job_store,
        parts.webhook_log,
        plain_fetcher,
        clock,
        [key.strip() for key in settings.webhook_secrets.split(",") if key.strip()],
        # the last attempt Pub/Sub makes records the event failed
        WebhookPolicy(
            max_attempts=min(settings.webhook_max_attempts, settings.max_delivery_attempts)
        ),
    )
    _log_choices(settings)
    try:
        await heartbeat.report_now()  # listed from its start, before any work
    except Exception:
        log.warning("worker report failed at start", exc_info=True)
    reporting = asyncio.create_task(heartbeat.run())
    stack.push_async_callback(_stopped, reporting)


async def _stopped(task: asyncio.Task[None]) -> None:
    task.cancel()
    with contextlib.suppress(asyncio.CancelledError):
        await task


def _extraction(
    settings: WorkerSettings,
) -> ExtractionProcesses | ExtractionInProcess | DocumentsApart:
    """Where pages are extracted: processes of their own within the budget (0: in process),
    documents in processes of their own at the lowest priority (documents_apart.py); pages
    read by OCR within the deployment's OCR limits, each its own budget."""
    limits = settings.ocr_limits()
    extract = functools.partial(extract_outcome, ocr_limits=limits)
    if settings.extraction_processes == 0:
        log.warning("SCRAPEJOBS_EXTRACTION_PROCESSES=0: pages are extracted without a budget")
        return ExtractionInProcess(extract)
    ocr_s = limits.document_cpu_s
    pages = ExtractionProcesses(
        settings.extraction_processes,
        settings.extraction_budget_s,
        extract,
        memory_mb=settings.extraction_memory_mb,
        extendable_s=ocr_s if settings.document_processes == 0 else 0.0,  # documents too
    )
    if settings.document_processes == 0:
        return pages
    documents = ExtractionProcesses(
        settings.document_processes,
        settings.extraction_budget_s,
        extract,
        memory_mb=settings.extraction_memory_mb,
        background=True,
        extendable_s=ocr_s,
        pausable=True,  # documents yield to pages (documents_yield.py)
    )
    return DocumentsApart(pages, documents)


def build_language_model(settings: WorkerSettings) -> LanguageModel | None:
    """The provider ``ai`` stages are answered by (SCRAPEJOBS_AI_PROVIDER), or None."""
    if settings.ai_provider == "openai":
        key = settings.ai_api_key.get_secret_value()
        return OpenAIChatModel(settings.ai_base_url, key, timeout_s=settings.ai_timeout_s)
    if settings.ai_provider == "vertex":
        return VertexGeminiModel(
            settings.project_id, settings.ai_location, timeout_s=settings.ai_timeout_s
        )
    return None


def renderer(settings: WorkerSettings, fetcher: Fetcher) -> Fetcher | None:
    """Headless Chromium, when the settings name a browser (the render lane's service); its
    modules load only then (Playwright is the worker's ``render`` extra)."""
    if not settings.render_browser_path:
        return None
    from scrapejobs_worker.rendering.browser_process import BrowserPolicy, BrowserProcess
    from scrapejobs_worker.rendering.chromium_renderer import ChromiumRenderer
    from scrapejobs_worker.rendering.render_policy import RenderPolicy

    policy = BrowserPolicy(
        settings.render_browser_path,
        pages_per_browser=settings.render_pages_per_browser,
        max_pages=settings.render_max_pages,
        sandbox=settings.render_sandbox,
    )
    limits = RenderPolicy(
        settings.max_body_bytes,
        script_timeout_s=settings.actions_script_timeout_s,
        max_pdf_pages=settings.actions_max_pdf_pages,
    )
    return ChromiumRenderer(fetcher, BrowserProcess(policy), limits)


def politeness_policy(settings: WorkerSettings) -> PolitenessPolicy:
    return PolitenessPolicy(
        per_host_concurrency=settings.per_host_concurrency,
        per_host_rps=settings.per_host_rps,
        max_wait_s=settings.max_throttle_wait_s,
        breaker=BreakerPolicy(settings.breaker_failure_threshold, settings.breaker_cooldown_s),
        user_agent=settings.user_agent,
        default_proxy=OWN_ROUTE if settings.proxy_default == "basic" else None,
    )


def warm_slots(settings: WorkerSettings, gate: HostGate, clock: Clock) -> HostGate:
    if not settings.warm_slot_idle_s:
        return gate
    policy = WarmSlotPolicy(keep_s=settings.warm_slot_keep_s, idle_s=settings.warm_slot_idle_s)
    return WarmSlotGate(gate, policy, clock)


def runner_policy(settings: WorkerSettings) -> RunnerPolicy:
    return RunnerPolicy(
        fetch_timeout_s=settings.fetch_timeout_s,
        lease_margin_s=settings.lease_margin_s,
        max_delivery_attempts=settings.max_delivery_attempts,
        max_deferrals=settings.max_deferrals,
        throttle_hold_s=settings.throttle_hold_s,
        retry_after_cap_s=settings.retry_after_cap_s,
    )


def batch_policy(settings: WorkerSettings) -> BatchPolicy:
    return BatchPolicy(
        ack_deadline_s=settings.ack_deadline_s,
        concurrency=settings.batch_concurrency,
        flush_interval_s=settings.batch_flush_interval_s,
        lease_s=settings.fetch_timeout_s + settings.lease_margin_s,
        store_timeout_s=settings.firestore_timeout_s,
        max_delivery_attempts=settings.max_delivery_attempts,
    )


def app_from_env() -> FastAPI:
    """Process entrypoint (``uvicorn --factory scrapejobs_worker.main:app_from_env``)."""
    settings = WorkerSettings()
    configure_logging("worker", settings.log_level, settings.project_id)
    return create_app(settings)
