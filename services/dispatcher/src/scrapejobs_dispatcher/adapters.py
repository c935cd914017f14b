"""The dispatcher's adapters: those a caller gives (``Overrides``: tests give in-memory twins),
else the real ones (Firestore, Pub/Sub), each made on first use and closed with the app on its
exit stack. A new port is one field here and one line (``OnFirestore``) or property."""

from __future__ import annotations

import logging
from contextlib import AsyncExitStack
from functools import cached_property
from typing import TypedDict, cast

from google.cloud import firestore

from scrapejobs_dispatcher.settings import DispatcherSettings
from scrapejobs_dispatcher.uploads.parsing_port import UploadParsing
from scrapejobs_dispatcher.uploads.parsing_processes import ParsingProcesses
from scrapejobs_shared.adapters.firestore.api_keys import FirestoreApiKeyStore
from scrapejobs_shared.adapters.firestore.held_batches import FirestoreHeldBatches
from scrapejobs_shared.adapters.firestore.idempotency import FirestoreIdempotencyKeys
from scrapejobs_shared.adapters.firestore.identity_move import IdentityMove
from scrapejobs_shared.adapters.firestore.job_store import FirestoreJobStore
from scrapejobs_shared.adapters.firestore.monitor_checks import FirestoreMonitorChecks
from scrapejobs_shared.adapters.firestore.monitor_store import FirestoreMonitorStore
from scrapejobs_shared.adapters.firestore.outcome_stats import FirestoreStats
from scrapejobs_shared.adapters.firestore.quota_ledger import FirestoreQuotaLedger
from scrapejobs_shared.adapters.firestore.session_revocations import FirestoreSessionRevocations
from scrapejobs_shared.adapters.firestore.tenant_proxies import FirestoreTenantProxies
from scrapejobs_shared.adapters.firestore.tenant_quotas import FirestoreTenantQuotas
from scrapejobs_shared.adapters.firestore.usage_meter import FirestoreUsageMeter
from scrapejobs_shared.adapters.firestore.workers import FirestoreWorkerDirectory
from scrapejobs_shared.adapters.service_adapters import OnFirestore, ServiceAdapters
from scrapejobs_shared.politeness.host_gate import HostGate
from scrapejobs_shared.ports.api_keys import ApiKeyStore
from scrapejobs_shared.ports.budgeted_work import BudgetedWork
from scrapejobs_shared.ports.dependency_unavailable import DependencyUnavailable
from scrapejobs_shared.ports.held_batches import HeldBatches
from scrapejobs_shared.ports.idempotency import IdempotencyKeys
from scrapejobs_shared.ports.job_store import JobStore
from scrapejobs_shared.ports.monitor_checks import MonitorChecks
from scrapejobs_shared.ports.monitor_store import MonitorStore
from scrapejobs_shared.ports.outcome_stats import StatsReader, StatsWriter
from scrapejobs_shared.ports.quota_ledger import QuotaLedger
from scrapejobs_shared.ports.session_revocations import SessionRevocations
from scrapejobs_shared.ports.task_publisher import TaskPublisher
from scrapejobs_shared.ports.tenant_proxies import TenantProxies
from scrapejobs_shared.ports.tenant_quotas import TenantQuotas
from scrapejobs_shared.ports.usage_meter import UsageMeter
from scrapejobs_shared.ports.webhooks import WebhookLog, WebhookOutbox
from scrapejobs_shared.ports.workers import WorkerDirectory

log = logging.getLogger(__name__)


class Overrides(TypedDict, total=False):
    """Adapters given instead of the real ones (each one left out: the real one)."""

    store: JobStore
    stats_writer: StatsWriter
    publisher: TaskPublisher
    gate: HostGate
    idempotency_keys: IdempotencyKeys
    stats_reader: StatsReader
    usage_meter: UsageMeter
    webhook_outbox: WebhookOutbox
    webhook_log: WebhookLog
    worker_directory: WorkerDirectory
    session_revocations: SessionRevocations
    api_keys: ApiKeyStore
    tenant_quotas: TenantQuotas
    tenant_proxies: TenantProxies
    held_batches: HeldBatches
    monitor_store: MonitorStore
    monitor_checks: MonitorChecks
    quota_ledger: QuotaLedger
    budgeted_work: BudgetedWork
    upload_parsing: UploadParsing


class Adapters(ServiceAdapters):
    """The dispatcher's ports (ServiceAdapters: the given one, else the real one)."""

    def __init__(
        self, settings: DispatcherSettings, given: Overrides, stack: AsyncExitStack
    ) -> None:
        super().__init__(settings, given, stack)
        self._settings = settings

    async def start(self) -> None:
        """What must happen before the first request: identities moved to their database
        (only when the real key store is used: a release before it kept them in the main
        database; an outage postpones the move to the next start)."""
        if "api_keys" in self._given or not self._separate_identities:
            return
        try:
            await IdentityMove(self._firestore, self._identities, self._deadline).run(
                self._settings.firestore_database
            )
        except DependencyUnavailable:
            log.warning("identities not moved yet: Firestore unavailable", exc_info=True)

    @cached_property
    def _identities(self) -> firestore.AsyncClient:
        if not self._separate_identities:
            return self._firestore
        return self._client(self._settings.identity_database)

    @property
    def _separate_identities(self) -> bool:
        return self._settings.identity_database != self._settings.firestore_database

    @cached_property
    def store(self) -> JobStore:
        store = self._or_real(
            "store", lambda: FirestoreJobStore(self._firestore, deadline=self._deadline)
        )
        return self._recorded(store)

    idempotency_keys = OnFirestore[IdempotencyKeys](FirestoreIdempotencyKeys)

    stats_reader = OnFirestore[StatsReader](FirestoreStats)

    usage_meter = OnFirestore[UsageMeter](FirestoreUsageMeter)

    worker_directory = OnFirestore[WorkerDirectory](FirestoreWorkerDirectory)

    @cached_property
    def session_revocations(self) -> SessionRevocations:
        return self._or_real(
            "session_revocations",
            lambda: FirestoreSessionRevocations(self._identities, self._deadline),
        )

    @cached_property
    def api_keys(self) -> ApiKeyStore:
        return self._or_real(
            "api_keys", lambda: FirestoreApiKeyStore(self._identities, self._deadline)
        )

    tenant_quotas = OnFirestore[TenantQuotas](FirestoreTenantQuotas)

    tenant_proxies = OnFirestore[TenantProxies](FirestoreTenantProxies)

    held_batches = OnFirestore[HeldBatches](FirestoreHeldBatches)

    monitor_store = OnFirestore[MonitorStore](FirestoreMonitorStore)

    monitor_checks = OnFirestore[MonitorChecks](FirestoreMonitorChecks)

    quota_ledger = OnFirestore[QuotaLedger](FirestoreQuotaLedger)

    @cached_property
    def upload_parsing(self) -> UploadParsing:
        """Uploads read in processes of their own (the one budgeted runner), closed with the
        app: SCRAPEJOBS_PARSE_PROCESSES at once, each within its CPU and memory."""
        if "upload_parsing" in self._given:
            return cast(UploadParsing, self._given["upload_parsing"])
        settings = self._settings
        parsing = ParsingProcesses(
            settings.parse_processes,
            settings.parse_budget_s,
            settings.parse_memory_mb,
            settings.ocr_limits(),
        )
        self._stack.push_async_callback(parsing.close)
        return parsing
