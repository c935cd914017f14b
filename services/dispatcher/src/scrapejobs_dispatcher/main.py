"""Composition root of the dispatcher: ``create_app(settings)``; ``app_from_env`` for uvicorn."""

from __future__ import annotations

import logging
from collections.abc import AsyncIterator
from concurrent.futures import ThreadPoolExecutor
from contextlib import asynccontextmanager
from datetime import timedelta
from functools import partial

from fastapi import FastAPI
from google.cloud import firestore

from scrapejobs_dispatcher.api_document import describe_this_deployment
from scrapejobs_dispatcher.authentication import Authenticator
from scrapejobs_dispatcher.body_limit import BodyLimitMiddleware
from scrapejobs_dispatcher.change_tracking import ChangeTracker
from scrapejobs_dispatcher.check_runner import CheckRunner
from scrapejobs_dispatcher.credentials_first import CredentialsFirstMiddleware
from scrapejobs_dispatcher.errors import install_error_handlers
from scrapejobs_dispatcher.firecrawl import errors as firecrawl_errors
from scrapejobs_dispatcher.firecrawl import monitor_routes as firecrawl_monitors
from scrapejobs_dispatcher.firecrawl import routes as firecrawl_routes
from scrapejobs_dispatcher.firecrawl import team_routes as firecrawl_team
from scrapejobs_dispatcher.firecrawl.site_map import SiteMapper
from scrapejobs_dispatcher.idempotent_submission import IdempotentSubmission
from scrapejobs_dispatcher.job_export import JobExport
from scrapejobs_dispatcher.job_service import JobService
from scrapejobs_dispatcher.monitor_service import Monitors
from scrapejobs_dispatcher.monitor_tick import MonitorTick
from scrapejobs_dispatcher.monitoring import Monitor
from scrapejobs_dispatcher.recovery import Recovery
from scrapejobs_dispatcher.repeated_parameters import RepeatedParametersMiddleware
from scrapejobs_dispatcher.routes import (
    dead_letters,
    health,
    hosts,
    jobs,
    keys,
    maintenance,
    monitors,
    scrape,
    stats,
    tenants,
    workers,
)
from scrapejobs_dispatcher.scheduler_registry import SchedulerRegistry
from scrapejobs_dispatcher.settings import DispatcherSettings
from scrapejobs_dispatcher.submission_metrics import SubmissionMetrics
from scrapejobs_dispatcher.submission_rules.daily_quota import DailyQuota
from scrapejobs_dispatcher.submission_rules.job_usage import job_usage
from scrapejobs_dispatcher.submission_rules.pattern_budget import CompileTurns, PatternBudget
from scrapejobs_dispatcher.submission_rules.rules import SubmissionRules
from scrapejobs_dispatcher.submission_rules.served_options import ServedOptions
from scrapejobs_dispatcher.sync_scrape import SyncScrape
from scrapejobs_dispatcher.tenant_quotas import Quotas
from scrapejobs_dispatcher.ui import install as install_dashboard
from scrapejobs_dispatcher.ui.figure_cache import FigureCache
from scrapejobs_dispatcher.ui.sessions import DashboardSessions
from scrapejobs_dispatcher.usage import Usage
from scrapejobs_shared.adapters.firestore.api_keys import FirestoreApiKeyStore
from scrapejobs_shared.adapters.firestore.call_deadline import CallDeadline
from scrapejobs_shared.adapters.firestore.held_batches import FirestoreHeldBatches
from scrapejobs_shared.adapters.firestore.host_gate import FirestoreHostGate
from scrapejobs_shared.adapters.firestore.idempotency import FirestoreIdempotencyKeys
from scrapejobs_shared.adapters.firestore.identity_move import IdentityMove
from scrapejobs_shared.adapters.firestore.job_store import FirestoreJobStore
from scrapejobs_shared.adapters.firestore.monitor_checks import FirestoreMonitorChecks
from scrapejobs_shared.adapters.firestore.monitor_store import FirestoreMonitorStore
from scrapejobs_shared.adapters.firestore.outcome_stats import FirestoreStats
from scrapejobs_shared.adapters.firestore.quota_ledger import FirestoreQuotaLedger
from scrapejobs_shared.adapters.firestore.session_revocations import FirestoreSessionRevocations
from scrapejobs_shared.adapters.firestore.tenant_quotas import FirestoreTenantQuotas
from scrapejobs_shared.adapters.firestore.webhook_log import FirestoreWebhookLog
from scrapejobs_shared.adapters.firestore.workers import FirestoreWorkerDirectory
from scrapejobs_shared.adapters.pubsub.call_deadline import PublishDeadline
from scrapejobs_shared.adapters.pubsub.publisher import PubSubTaskPublisher
from scrapejobs_shared.adapters.pubsub.webhook_outbox import PubSubWebhookOutbox
from scrapejobs_shared.delivery.enqueue import StoreForEnqueue
from scrapejobs_shared.delivery.job_events import JobEvents
from scrapejobs_shared.domain.clock import utc_now
from scrapejobs_shared.observability.json_logging import configure_logging
from scrapejobs_shared.observability.telemetry import Telemetry, telemetry_for
from scrapejobs_shared.politeness.host_gate import HostGate
from scrapejobs_shared.ports.api_keys import ApiKeyStore
from scrapejobs_shared.ports.dependency_unavailable import DependencyUnavailable
from scrapejobs_shared.ports.held_batches import HeldBatches
from scrapejobs_shared.ports.idempotency import IdempotencyKeys
from scrapejobs_shared.ports.monitor_checks import MonitorChecks
from scrapejobs_shared.ports.monitor_store import MonitorStore
from scrapejobs_shared.ports.outcome_stats import StatsReader
from scrapejobs_shared.ports.quota_ledger import QuotaLedger
from scrapejobs_shared.ports.session_revocations import SessionRevocations
from scrapejobs_shared.ports.task_publisher import TaskPublisher
from scrapejobs_shared.ports.tenant_quotas import Quota, TenantQuotas
from scrapejobs_shared.ports.webhooks import WebhookLog, WebhookOutbox
from scrapejobs_shared.ports.workers import WorkerDirectory
from scrapejobs_web.request_spans import RequestSpanMiddleware

log = logging.getLogger(__name__)
# the API's routers, in the order they are included (the dashboard installs its own)
API_ROUTERS = (
    health.router,
    jobs.router,
    scrape.router,
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
)

SERVICE = "scrapejobs-dispatcher"


def create_app(
    settings: DispatcherSettings,
    store: StoreForEnqueue | None = None,
    publisher: TaskPublisher | None = None,
    gate: HostGate | None = None,
    idempotency_keys: IdempotencyKeys | None = None,
    stats_reader: StatsReader | None = None,
    webhook_outbox: WebhookOutbox | None = None,
    webhook_log: WebhookLog | None = None,
    telemetry: Telemetry | None = None,
    worker_directory: WorkerDirectory | None = None,
    session_revocations: SessionRevocations | None = None,
    api_keys: ApiKeyStore | None = None,
    tenant_quotas: TenantQuotas | None = None,
    held_batches: HeldBatches | None = None,
    monitor_store: MonitorStore | None = None,
    monitor_checks: MonitorChecks | None = None,
    quota_ledger: QuotaLedger | None = None,
) -> FastAPI:
    """Build the app; real Firestore/Pub/Sub adapters and the telemetry the settings choose
    unless others are given (tests; the caller then shuts down the telemetry it gave)."""
    telemetry_used = telemetry or telemetry_for(SERVICE, settings)
    tracer = telemetry_used.tracer(SERVICE)

    @asynccontextmanager
    async def lifespan(app: FastAPI) -> AsyncIterator[None]:
        client = None
        if (
            store is None
            or gate is None
            or idempotency_keys is None
            or stats_reader is None
            or webhook_log is None
            or worker_directory is None
            or session_revocations is None
            or api_keys is None
            or tenant_quotas is None
            or held_batches is None
            or monitor_store is None
            or monitor_checks is None
            or quota_ledger is None
        ):
            client = firestore.AsyncClient(
                project=settings.project_id, database=settings.firestore_database
            )
        deadline = CallDeadline(settings.firestore_timeout_s)
        identities = client
        if client is not None and settings.identity_database != settings.firestore_database:
            identities = firestore.AsyncClient(
                project=settings.project_id, database=settings.identity_database
            )
            await move_identities(client, identities, deadline, settings.firestore_database)
        publish_deadline = PublishDeadline(settings.pubsub_timeout_s)
        job_store = store or FirestoreJobStore(client, deadline=deadline)
        app.state.workers = worker_directory or FirestoreWorkerDirectory(client, deadline)
        keyring.use_store(api_keys or FirestoreApiKeyStore(identities, deadline))
        app.state.dashboard_sessions = DashboardSessions(
            keyring,
            settings.dashboard_session_s,
            session_revocations or FirestoreSessionRevocations(identities, deadline),
            utc_now,
            settings.session_key.encode(),
        )
        host_gate = app.state.host_gate = gate or FirestoreHostGate(client, deadline)
        task_publisher = publisher or PubSubTaskPublisher(
            settings.project_id, settings.task_topic, publish_deadline
        )
        outbox = webhook_outbox or PubSubWebhookOutbox(
            settings.project_id, settings.webhook_topic, publish_deadline
        )
        stats = stats_reader or FirestoreStats(client, deadline)
        app.state.usage = Usage(stats, utc_now, settings.plan())
        app.state.quotas = quotas = Quotas(
            tenant_quotas or FirestoreTenantQuotas(client, deadline),
            stats,
            utc_now,
            Quota(settings.tenant_pages_per_day, settings.tenant_pages_in_flight),
            settings.ai_prices(),
            settings.quota_recheck_s,
        )
        app.state.monitor = Monitor(
            stats,
            job_store,
            host_gate,
            task_publisher,
            utc_now,
            settings.health_policy(),
            settings.ai_prices(),
        )
        compiler = ThreadPoolExecutor(1, thread_name_prefix="patterns")
        ledger = quota_ledger or FirestoreQuotaLedger(client, deadline)
        usage = partial(job_usage, job_store)
        rules = submission_rules(settings, DailyQuota(quotas, ledger, usage), compiler)
        events = JobEvents(job_store, outbox)
        held = held_batches or FirestoreHeldBatches(client, deadline)
        deliveries = webhook_log or FirestoreWebhookLog(client, deadline)
        app.state.jobs = JobService(
            job_store,
            task_publisher,
            utc_now,
            timedelta(days=settings.retention_days),
            tracer,
            batch_size=settings.batch_size,
            events=events,
            webhook_log=deliveries,
            metrics=SubmissionMetrics(telemetry_used.meter(SERVICE)),
            coalesce_window_s=settings.coalesce_window_ms / 1000 or None,
            coalesce_busy_window_s=settings.coalesce_busy_window_ms / 1000,
            ai_prices=settings.ai_prices(),
            rules=rules,
            held=held,
            host_window=settings.host_window_batches,
            held_batch_size=settings.held_batch_size,
        )
        app.state.recovery = Recovery(
            job_store, task_publisher, utc_now, tracer, events, deliveries, host_gate, held, rules
        )
        app.state.export = JobExport(job_store, utc_now)
        monitors = monitor_store or FirestoreMonitorStore(client, deadline)
        app.state.monitors = Monitors(
            monitors, utc_now, rules.check_shape, settings.monitor_limits()
        )
        checks = monitor_checks or FirestoreMonitorChecks(client, deadline)
        runner = CheckRunner(monitors, checks, app.state.jobs, utc_now, outbox)
        app.state.check_runner = runner
        app.state.monitor_tick = MonitorTick(monitors, checks, runner, utc_now)
        app.state.change_tracker = ChangeTracker(checks, utc_now)
        app.state.sync_scrape = SyncScrape(app.state.jobs, job_store, settings.scrape_max_wait_s)
        app.state.site_mapper = SiteMapper(app.state.sync_scrape, job_store, settings.user_agent)
        app.state.idempotent_submissions = IdempotentSubmission(
            app.state.jobs,
            idempotency_keys or FirestoreIdempotencyKeys(client, deadline),
            utc_now,
            timedelta(seconds=settings.idempotency_key_ttl_s),
            stale_after=timedelta(seconds=settings.idempotency_stale_s),
        )
        log.info("dispatcher ready", extra={"project": settings.project_id})
        try:
            yield
        finally:
            await app.state.jobs.drain()
            compiler.shutdown(wait=False, cancel_futures=True)
            await task_publisher.close()
            if isinstance(outbox, PubSubWebhookOutbox):
                await outbox.close()
            if identities is not None and identities is not client:
                identities.close()
            if client is not None:
                client.close()
            if telemetry is None:
                telemetry_used.shutdown()

    app = FastAPI(
        title="scrapejobs dispatcher",
        version="0.1.0",
        description="Submit scraping jobs and read their results.",
        lifespan=lifespan,
    )
    app.state.authenticator = authenticator = Authenticator(settings)
    app.state.keyring = keyring = authenticator.keyring
    app.state.reconcile_after_s = settings.reconcile_after_s
    app.state.scheduler_registry = SchedulerRegistry.parse(settings.schedules)
    app.state.v2_defaults = settings.v2_defaults()
    app.add_middleware(RepeatedParametersMiddleware)  # innermost: after the credentials
    app.add_middleware(BodyLimitMiddleware, max_bytes=settings.max_body_bytes)
    app.add_middleware(CredentialsFirstMiddleware, authenticator=authenticator)
    app.add_middleware(RequestSpanMiddleware, tracer=tracer)
    install_error_handlers(app)
    firecrawl_errors.install(app)
    describe_this_deployment(app, settings.ai_provider)
    for router in API_ROUTERS:
        app.include_router(router)
    install_dashboard(app, FigureCache(settings.dashboard_cache_s))
    return app


async def move_identities(
    main: firestore.AsyncClient,
    identities: firestore.AsyncClient,
    deadline: CallDeadline,
    main_database: str,
) -> None:
    """What a release before the identity database kept in the main one moves there; an
    outage only postpones it to the next instance's start (keys not yet moved are refused)."""
    try:
        await IdentityMove(main, identities, deadline).run(main_database)
    except DependencyUnavailable:
        log.warning("identities not moved yet: Firestore unavailable", exc_info=True)


def submission_rules(
    settings: DispatcherSettings, quota: DailyQuota, compiler: ThreadPoolExecutor
) -> SubmissionRules:
    """The rules every submission passes, in order (submission_rules/)."""
    served = ServedOptions(
        settings.ai_provider, settings.offered_models(), settings.allow_unverified_tls
    )
    budget = PatternBudget(CompileTurns(compiler), settings.max_patterns_per_job)
    return SubmissionRules(shape=[served, budget], admission=[quota])


def app_from_env() -> FastAPI:
    """Process entrypoint (``uvicorn --factory scrapejobs_dispatcher.main:app_from_env``)."""
    settings = DispatcherSettings()
    configure_logging("dispatcher", settings.log_level, settings.project_id)
    return create_app(settings)
