"""The worker's adapters: those a caller gives (``Overrides``: tests give in-memory twins),
else the real ones (Firestore, Pub/Sub, the SSRF-safe fetcher, a language model), each made on
first use and closed with the app on its exit stack. A caller that gives the job store runs
without the optional stores it does not give (a tenant's caps, held batches, the worker list,
the page cache): they would need Firestore. A new port is one field here and one line
(``OptionalOnFirestore``) or property."""

from __future__ import annotations

from contextlib import AsyncExitStack
from functools import cached_property
from typing import TypedDict, cast

from scrapejobs_shared.adapters.firestore.answer_cache import FirestoreAnswerCache
from scrapejobs_shared.adapters.firestore.held_batches import FirestoreHeldBatches
from scrapejobs_shared.adapters.firestore.job_store import FirestoreJobStore
from scrapejobs_shared.adapters.firestore.page_cache import FirestorePageCache
from scrapejobs_shared.adapters.firestore.tenant_proxies import FirestoreTenantProxies
from scrapejobs_shared.adapters.firestore.tenant_quotas import FirestoreTenantQuotas
from scrapejobs_shared.adapters.firestore.workers import FirestoreWorkerDirectory
from scrapejobs_shared.adapters.service_adapters import OptionalOnFirestore, ServiceAdapters
from scrapejobs_shared.politeness.host_gate import HostGate
from scrapejobs_shared.ports.answer_cache import AnswerCache
from scrapejobs_shared.ports.budgeted_work import BudgetedWork
from scrapejobs_shared.ports.fetcher import Fetcher
from scrapejobs_shared.ports.held_batches import HeldBatches
from scrapejobs_shared.ports.job_store import JobStore
from scrapejobs_shared.ports.outcome_stats import StatsWriter
from scrapejobs_shared.ports.page_cache import PageCache
from scrapejobs_shared.ports.task_publisher import TaskPublisher
from scrapejobs_shared.ports.tenant_proxies import TenantProxies
from scrapejobs_shared.ports.tenant_quotas import TenantQuotas
from scrapejobs_shared.ports.webhooks import WebhookLog, WebhookOutbox
from scrapejobs_shared.ports.workers import WorkerDirectory
from scrapejobs_worker.ai.model_port import LanguageModel
from scrapejobs_worker.delivery.push_auth import KeySource
from scrapejobs_worker.settings import WorkerSettings


class Overrides(TypedDict, total=False):
    """Adapters given instead of the real ones (each one left out: the real one)."""

    store: JobStore
    stats_writer: StatsWriter
    fetcher: Fetcher
    push_keys: KeySource
    gate: HostGate
    publisher: TaskPublisher
    webhook_outbox: WebhookOutbox
    webhook_log: WebhookLog
    worker_directory: WorkerDirectory
    language_model: LanguageModel
    answer_cache: AnswerCache
    page_cache: PageCache
    tenant_quotas: TenantQuotas
    tenant_proxies: TenantProxies
    held_batches: HeldBatches
    budgeted_work: BudgetedWork


class Adapters(ServiceAdapters):
    """The worker's ports (ServiceAdapters: the given one, else the real one)."""

    def __init__(self, settings: WorkerSettings, given: Overrides, stack: AsyncExitStack) -> None:
        super().__init__(settings, given, stack)
        self._settings = settings

    @cached_property
    def store(self) -> JobStore:
        store = self._or_real(
            "store", lambda: FirestoreJobStore(self._firestore, deadline=self._deadline)
        )
        return self._recorded(store)

    @property
    def fetcher(self) -> Fetcher | None:
        """The fetcher given (None: the worker builds its SSRF-safe one from its settings)."""
        return cast(Fetcher | None, self._given.get("fetcher"))

    @property
    def push_keys(self) -> KeySource | None:
        """Keys given for push tokens (None: Google's, read as needed)."""
        return cast(KeySource | None, self._given.get("push_keys"))

    @property
    def language_model(self) -> LanguageModel | None:
        """The model given (None: the one the settings configure, if any)."""
        return cast(LanguageModel | None, self._given.get("language_model"))

    @cached_property
    def answer_cache(self) -> AnswerCache | None:
        """The ai stage's answers kept (none without a provider configured)."""
        if self._settings.ai_provider is None and "answer_cache" not in self._given:
            return None
        return self._on_firestore("answer_cache", FirestoreAnswerCache)

    worker_directory = OptionalOnFirestore[WorkerDirectory](FirestoreWorkerDirectory)

    page_cache = OptionalOnFirestore[PageCache](FirestorePageCache)

    tenant_quotas = OptionalOnFirestore[TenantQuotas](FirestoreTenantQuotas)

    tenant_proxies = OptionalOnFirestore[TenantProxies](FirestoreTenantProxies)

    held_batches = OptionalOnFirestore[HeldBatches](FirestoreHeldBatches)
