"""Composition root of the dispatcher: ``create_app(settings)``; ``app_from_env`` for uvicorn."""

from __future__ import annotations

import logging
from collections.abc import AsyncIterator
from concurrent.futures import ThreadPoolExecutor
from contextlib import AsyncExitStack, asynccontextmanager
from datetime import timedelta
from functools import partial

from fastapi import FastAPI

from scrapejobs_dispatcher.adapters import Adapters, Overrides
from scrapejobs_dispatcher.edge.api_document import describe_this_deployment
from scrapejobs_dispatcher.edge.body_limit import BodyLimitMiddleware
from scrapejobs_dispatcher.edge.repeated_parameters import RepeatedParametersMiddleware
from scrapejobs_dispatcher.errors import install_error_handlers
from scrapejobs_dispatcher.firecrawl import errors as firecrawl_errors
from scrapejobs_dispatcher.firecrawl import monitor_routes as firecrawl_monitors
from scrapejobs_dispatcher.firecrawl import parse_routes as firecrawl_parse
from scrapejobs_dispatcher.firecrawl import routes as firecrawl_routes
from scrapejobs_dispatcher.firecrawl import search_routes
from scrapejobs_dispatcher.firecrawl import team_routes as firecrawl_team
from scrapejobs_dispatcher.firecrawl.search_answers import FirecrawlSearch
from scrapejobs_dispatcher.firecrawl.site_map import SiteMapper
from scrapejobs_dispatcher.jobs.job_export import JobExport
from scrapejobs_dispatcher.jobs.job_files import JobFiles
from scrapejobs_dispatcher.jobs.job_parts import JobParts
from scrapejobs_dispatcher.jobs.job_service import JobPolicy
from scrapejobs_dispatcher.jobs.recovery import Recovery
from scrapejobs_dispatcher.monitors.change_tracking import ChangeTracker
from scrapejobs_dispatcher.monitors.check_runner import CheckRunner
from scrapejobs_dispatcher.monitors.monitor_service import Monitors
from scrapejobs_dispatcher.monitors.monitor_tick import MonitorTick
from scrapejobs_dispatcher.monitors.page_comparisons import PageComparisons
from scrapejobs_dispatcher.routes import (
    dead_letters,
    health,
    hosts,
    jobs,
    keys,
    maintenance,
    monitors,
    parse,
    scrape,
    stats,
    tenant_proxies,
    tenants,
    workers,
)
from scrapejobs_dispatcher.rules.action_limits import WithinActionLimits
from scrapejobs_dispatcher.rules.daily_quota import DailyQuota
from scrapejobs_dispatcher.rules.job_usage import job_usage
from scrapejobs_dispatcher.rules.pattern_budget import CompileTurns, PatternBudget
from scrapejobs_dispatcher.rules.rules import SubmissionRules
from scrapejobs_dispatcher.rules.search_served import SearchServed
from scrapejobs_dispatcher.rules.served_options import ServedOptions
from scrapejobs_dispatcher.scheduling.scheduler_registry import SchedulerRegistry
from scrapejobs_dispatcher.search.ddgs_engine import DdgsEngine
from scrapejobs_dispatcher.search.id_token_auth import GoogleIdTokenAuth
from scrapejobs_dispatcher.search.result_scrapes import ResultScrapes
from scrapejobs_dispatcher.search.search_targets import SearchTargets
from scrapejobs_dispatcher.search.searxng_engine import SearxngEngine
from scrapejobs_dispatcher.search.web_search import WebSearch
from scrapejobs_dispatcher.settings import DispatcherSettings
from scrapejobs_dispatcher.submission.idempotent import IdempotentSubmission
from scrapejobs_dispatcher.submission.intake import JobIntake
from scrapejobs_dispatcher.submission.metrics import SubmissionMetrics
from scrapejobs_dispatcher.submission.sync_scrape import SyncScrape
from scrapejobs_dispatcher.system_health import SystemHealth
from scrapejobs_dispatcher.tenants.authentication import Authenticator
from scrapejobs_dispatcher.tenants.credentials_first import CredentialsFirstMiddleware
from scrapejobs_dispatcher.tenants.tenant_directory import TenantDirectory
from scrapejobs_dispatcher.tenants.tenant_quotas import Quotas
from scrapejobs_dispatcher.tenants.usage import Usage
from scrapejobs_dispatcher.ui import install as install_dashboard
from scrapejobs_dispatcher.ui.figure_cache import FigureCache
from scrapejobs_dispatcher.ui.sessions import DashboardSessions
from scrapejobs_dispatcher.uploads.upload_service import UploadLimits, UploadService
from scrapejobs_dispatcher.uploads.upload_slots import UploadSlots
from scrapejobs_shared.delivery.enqueue import Enqueuer
from scrapejobs_shared.delivery.job_events import JobEvents
from scrapejobs_shared.domain.clock import utc_now
from scrapejobs_shared.observability.json_logging import configure_logging
from scrapejobs_shared.observability.telemetry import Telemetry, telemetry_for
from scrapejobs_shared.options import ServedHere
from scrapejobs_shared.ports.search_engine import SearchEngine
from scrapejobs_shared.ports.tenant_quotas import Quota
from scrapejobs_shared.tenant_pools import ProxyPools
from scrapejobs_web.request_spans import RequestSpanMiddleware

log = logging.getLogger(__name__)
# the API's routers, in the order they are included (the dashboard installs its own)
API_ROUTERS = (
    health.router,
    jobs.router,
    scrape.router,
    parse.router,
    hosts.router,
    maintenance.router,
    dead_letters.router,
    stats.router,
    workers.router,
    keys.router,
    tenants.router,
    monitors.router,
    firecrawl_routes.router,
    firecrawl_team.router,
    firecrawl_monitors.router,
    firecrawl_parse.router,
    search_routes.router,
    search_routes.v1_router,
)

SERVICE = "scrapejobs-dispatcher"


def create_app(
    settings: DispatcherSettings,
    overrides: Overrides | None = None,
    telemetry: Telemetry | None = None,
) -> FastAPI:
    """Build the app: real Firestore/Pub/Sub adapters but those ``overrides`` gives (tests),
    and the telemetry the settings choose unless one is given (the caller then shuts it
    down)."""
    telemetry_used = telemetry or telemetry_for(SERVICE, settings)
    tracer = telemetry_used.tracer(SERVICE)

    @asynccontextmanager
    async def lifespan(app: FastAPI) -> AsyncIterator[None]:
        async with AsyncExitStack() as stack:
            if telemetry is None:
                stack.callback(telemetry_used.shutdown)
            parts = Adapters(settings, overrides or {}, stack)
            await parts.start()
            compiler = ThreadPoolExecutor(1, thread_name_prefix="patterns")
            stack.callback(compiler.shutdown, wait=False, cancel_futures=True)
            _serve(app, settings, parts, compiler, telemetry_used)
            stack.push_async_callback(app.state.jobs.drain)  # first out: then the rest
            log.info("dispatcher ready", extra={"project": settings.project_id})
            yield

    app = FastAPI(
        title="scrapejobs dispatcher",
        version="0.1.0",
        description="Submit scraping jobs and read their results.",
        lifespan=lifespan,
    )
    app.state.authenticator = authenticator = Authenticator(settings)
    app.state.keyring = authenticator.keyring
    app.state.reconcile_after_s = settings.reconcile_after_s
    app.state.scheduler_registry = SchedulerRegistry.parse(settings.schedules)
    app.state.served_here = here = settings.served_here()
    app.add_middleware(RepeatedParametersMiddleware)  # innermost: after the credentials
    app.add_middleware(BodyLimitMiddleware, max_bytes=settings.max_body_bytes)
    app.add_middleware(
        CredentialsFirstMiddleware,
        authenticator=authenticator,
        reshapes={firecrawl_errors.PREFIX: firecrawl_errors.reshape},
    )
    app.add_middleware(RequestSpanMiddleware, tracer=tracer)
    install_error_handlers(app)
    firecrawl_errors.install(app)
    # with tenants' own pools, what is served depends on the caller: the document offers all
    describe_this_deployment(
        app, settings.ai_provider, None if settings.tenant_proxies else here.proxies
    )
    for router in API_ROUTERS:
        app.include_router(router)
    if settings.tenant_proxies:  # tenants' own pools: their resource exists where they may
        app.include_router(tenant_proxies.router)
    install_dashboard(app, FigureCache(settings.dashboard_cache_s))
    return app


def _serve(
    app: FastAPI,
    settings: DispatcherSettings,
    parts: Adapters,
    compiler: ThreadPoolExecutor,
    telemetry: Telemetry,
) -> None:
    """The services the routes read (``app.state``, through dependencies.py), on ``parts``."""
    tracer = telemetry.tracer(SERVICE)
    state = app.state
    state.keyring.use_store(parts.api_keys)
    state.workers = parts.worker_directory
    state.dashboard_sessions = DashboardSessions(
        state.keyring,
        settings.dashboard_session_s,
        parts.session_revocations,
        utc_now,
        settings.session_key.encode(),
    )
    state.host_gate = parts.gate
    here: ServedHere = state.served_here
    tenant_proxies = parts.tenant_proxies if settings.tenant_proxies else None
    state.proxy_pools = pools = ProxyPools(here.proxies, tenant_proxies)
    stats = parts.stats_reader
    state.usage = Usage(stats, utc_now, settings.plan())
    state.quotas = quotas = Quotas(
        parts.tenant_quotas,
        stats,
        utc_now,
        Quota(settings.tenant_pages_per_day, settings.tenant_pages_in_flight),
        settings.ai_prices(),
        settings.quota_recheck_s,
    )
    state.tenant_directory = TenantDirectory(quotas, pools)
    job_store, publisher = parts.store, parts.publisher
    state.system_health = SystemHealth(
        stats,
        job_store,
        parts.gate,
        publisher,
        utc_now,
        settings.health_policy(),
        settings.ai_prices(),
    )
    usage = partial(job_usage, job_store)
    served = ServedOptions(settings.ai_provider, settings.offered_models(), here, pools)
    quota = DailyQuota(quotas, parts.quota_ledger, usage)
    rules = submission_rules(settings, served, quota, compiler)
    events = JobEvents(job_store, parts.webhook_outbox)
    policy = JobPolicy(
        timedelta(days=settings.retention_days),
        batch_size=settings.batch_size,
        coalesce_window_s=settings.coalesce_window_ms / 1000 or None,
        coalesce_busy_window_s=settings.coalesce_busy_window_ms / 1000,
        host_window=settings.host_window_batches,
        held_batch_size=settings.held_batch_size,
        ai_prices=settings.ai_prices(),
    )
    enqueuer = Enqueuer(job_store, publisher, utc_now, tracer, events)
    job_parts = JobParts(job_store, enqueuer, rules, parts.webhook_log, parts.held_batches)
    searches = WebSearch(search_engine(settings), settings.search_cache_s, parts.usage_meter)
    state.web_search = searches
    state.search_provider = settings.search_provider if settings.search_served() else None
    metrics = SubmissionMetrics(telemetry.meter(SERVICE))
    state.jobs = JobIntake(job_parts, policy, metrics, SearchTargets(searches))
    state.recovery = Recovery(job_parts, parts.gate)
    state.export = JobExport(job_store, utc_now)
    state.job_files = JobFiles(job_store, parts.file_store, utc_now)
    monitors, checks = parts.monitor_store, parts.monitor_checks
    state.monitors = Monitors(monitors, utc_now, rules.check_shape, settings.monitor_limits())
    comparisons = PageComparisons(parts.budgeted_work, settings.compare_budget())
    runner = CheckRunner(monitors, checks, state.jobs, utc_now, comparisons, parts.webhook_outbox)
    state.check_runner = runner
    state.monitor_tick = MonitorTick(monitors, checks, runner, utc_now)
    state.change_tracker = ChangeTracker(checks, comparisons, utc_now)
    state.idempotent_submissions = submissions = IdempotentSubmission(
        state.jobs,
        parts.idempotency_keys,
        utc_now,
        timedelta(seconds=settings.idempotency_key_ttl_s),
        stale_after=timedelta(seconds=settings.idempotency_stale_s),
    )
    state.sync_scrape = SyncScrape(
        submissions, job_store, settings.scrape_max_wait_s, served=served
    )
    limits = UploadLimits(settings.upload_limit())
    slots = UploadSlots(settings.parse_processes, settings.parse_queue)
    state.uploads = UploadService(state.jobs, job_store, parts.upload_parsing, limits, slots)
    state.site_mapper = SiteMapper(state.sync_scrape, job_store, settings.user_agent)
    scrapes = ResultScrapes(state.sync_scrape)
    state.firecrawl_search = FirecrawlSearch(searches, scrapes, here, rules.check_shape)


def search_engine(settings: DispatcherSettings) -> SearchEngine | None:
    """The search provider (None: none configured, a search is a 503 naming the setting)."""
    if not settings.search_served():
        return None
    if settings.search_provider == "ddgs":
        return DdgsEngine()
    audience = settings.searxng_audience  # behind Cloud Run IAM: an ID token for it
    auth = GoogleIdTokenAuth(audience) if audience else None
    return SearxngEngine(settings.searxng_url, auth=auth)


def submission_rules(
    settings: DispatcherSettings,
    served: ServedOptions,
    quota: DailyQuota,
    compiler: ThreadPoolExecutor,
) -> SubmissionRules:
    """The rules every submission passes, in order (rules/)."""
    budget = PatternBudget(CompileTurns(compiler), settings.max_patterns_per_job)
    actions = WithinActionLimits(settings.action_limits())
    searched = SearchServed(settings.search_served())
    return SubmissionRules(shape=[served, searched, actions, budget], admission=[quota])


def app_from_env() -> FastAPI:
    """Process entrypoint (``uvicorn --factory scrapejobs_dispatcher.main:app_from_env``)."""
    settings = DispatcherSettings()
    configure_logging("dispatcher", settings.log_level, settings.project_id)
    return create_app(settings)
