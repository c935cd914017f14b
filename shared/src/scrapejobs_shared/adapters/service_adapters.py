"""What both services' composition roots share: each port's adapter is the one a caller gives
(tests give in-memory twins), else the real one, made once on first use; the Firestore clients
and the Pub/Sub publishers made are closed on the app's exit stack. Each service's
``adapters.py`` subclasses :class:`ServiceAdapters` with its own ports; a port on the main
database is one line there: ``quota_ledger = OnFirestore[QuotaLedger](FirestoreQuotaLedger)``."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from contextlib import AsyncExitStack
from functools import cached_property
from typing import Any, Generic, Self, TypeVar, cast, overload

from google.cloud import firestore

from scrapejobs_shared.adapters.budgeted_processes import BudgetedProcesses
from scrapejobs_shared.adapters.cloud_storage.file_store import (
    CloudStorageFileStore,
    storage_client,
)
from scrapejobs_shared.adapters.firestore.call_deadline import CallDeadline
from scrapejobs_shared.adapters.firestore.host_gate import FirestoreHostGate
from scrapejobs_shared.adapters.firestore.outcome_stats import FirestoreStatsWriter
from scrapejobs_shared.adapters.firestore.webhook_log import FirestoreWebhookLog
from scrapejobs_shared.adapters.pubsub.call_deadline import PublishDeadline
from scrapejobs_shared.adapters.pubsub.publisher import PubSubTaskPublisher
from scrapejobs_shared.adapters.pubsub.webhook_outbox import PubSubWebhookOutbox
from scrapejobs_shared.config.settings import CommonSettings
from scrapejobs_shared.delivery.recorded_store import RecordedStore
from scrapejobs_shared.delivery.stats_buffer import StatsBuffer
from scrapejobs_shared.politeness.host_gate import HostGate
from scrapejobs_shared.ports.budgeted_work import BudgetedWork
from scrapejobs_shared.ports.file_store import FileStore
from scrapejobs_shared.ports.job_store import JobStore
from scrapejobs_shared.ports.outcome_stats import StatsWriter
from scrapejobs_shared.ports.task_publisher import TaskPublisher
from scrapejobs_shared.ports.webhooks import WebhookLog, WebhookOutbox

T = TypeVar("T")
Made = Callable[[firestore.AsyncClient, CallDeadline], T]


class _PortAdapter(Generic[T]):
    """A port's adapter, as a class attribute of a service's adapters: the one given for it,
    else ``adapter`` on the main database; made once, on first use (then kept on the
    instance, as ``cached_property`` keeps a value)."""

    def __init__(self, adapter: Made[T]) -> None:
        self._adapter = adapter
        self._port = ""

    def __set_name__(self, owner: type, name: str) -> None:
        self._port = name

    def _kept(self, adapters: ServiceAdapters, made: T | None) -> T | None:
        adapters.__dict__[self._port] = made
        return made


class OnFirestore(_PortAdapter[T]):
    @overload
    def __get__(self, instance: None, owner: type) -> Self: ...

    @overload
    def __get__(self, instance: ServiceAdapters, owner: type) -> T: ...

    def __get__(self, instance: ServiceAdapters | None, owner: type) -> Self | T | None:
        if instance is None:
            return self
        return self._kept(instance, instance._on_firestore(self._port, self._adapter))


class OptionalOnFirestore(_PortAdapter[T]):
    """A port a service runs without: None when a test gave the job store but not this one."""

    @overload
    def __get__(self, instance: None, owner: type) -> Self: ...

    @overload
    def __get__(self, instance: ServiceAdapters, owner: type) -> T | None: ...

    def __get__(self, instance: ServiceAdapters | None, owner: type) -> Self | T | None:
        if instance is None:
            return self
        return self._kept(instance, instance._optional_on_firestore(self._port, self._adapter))


class ServiceAdapters:
    def __init__(
        self, settings: CommonSettings, given: Mapping[str, Any], stack: AsyncExitStack
    ) -> None:
        self._common = settings
        self._given: dict[str, Any] = dict(given)
        self._stack = stack
        self._deadline = CallDeadline(settings.firestore_timeout_s)
        self._publish_deadline = PublishDeadline(settings.pubsub_timeout_s)

    def _or_real(self, port: str, real: Callable[[], T]) -> T:
        """The adapter given for ``port``, else ``real()``."""
        given = self._given.get(port)
        return cast(T, given) if given is not None else real()

    def _on_firestore(self, port: str, adapter: Made[T]) -> T:
        """The adapter given for ``port``, else ``adapter`` on the main database."""
        return self._or_real(port, lambda: adapter(self._firestore, self._deadline))

    def _optional_on_firestore(self, port: str, adapter: Made[T]) -> T | None:
        """The adapter given for ``port``; else, unless the caller gave the job store (tests:
        the optional stores they did not give are left out), the real one."""
        if self._given.get(port) is not None or "store" not in self._given:
            return self._on_firestore(port, adapter)
        return None

    @cached_property
    def stats(self) -> StatsBuffer:
        """The process's outcome statistics (delivery/stats_buffer.py), written through the
        writer given, else the store given (the memory twin writes them too), else Firestore;
        what is left is written when the app stops."""
        writer = self._given.get("stats_writer") or self._given.get("store")
        if writer is None:
            writer = FirestoreStatsWriter(self._firestore, self._deadline)
        buffer = StatsBuffer(cast(StatsWriter, writer), self._common.stats_every_s)
        self._stack.push_async_callback(buffer.aclose)
        return buffer

    def _recorded(self, store: JobStore) -> JobStore:
        """``store`` whose settles' outcomes go to the process's statistics."""
        return cast(JobStore, RecordedStore(store, self.stats))

    def _client(self, database: str) -> firestore.AsyncClient:
        client = firestore.AsyncClient(project=self._common.project_id, database=database)
        self._stack.callback(client.close)
        return client

    @cached_property
    def _firestore(self) -> firestore.AsyncClient:
        return self._client(self._common.firestore_database)

    @cached_property
    def publisher(self) -> TaskPublisher:
        settings = self._common
        publisher = self._or_real(
            "publisher",
            lambda: PubSubTaskPublisher(
                settings.project_id, settings.task_topic, self._publish_deadline
            ),
        )
        self._stack.push_async_callback(publisher.close)
        return publisher

    @cached_property
    def webhook_outbox(self) -> WebhookOutbox:
        if "webhook_outbox" in self._given:
            return cast(WebhookOutbox, self._given["webhook_outbox"])
        settings = self._common
        outbox = PubSubWebhookOutbox(
            settings.project_id, settings.webhook_topic, self._publish_deadline
        )
        self._stack.push_async_callback(outbox.close)
        return outbox

    @cached_property
    def file_store(self) -> FileStore | None:
        """The files pages make in the browser (screenshots): the store given, else the
        settings' bucket (SCRAPEJOBS_FILES_BUCKET), else none."""
        if "file_store" in self._given:
            return cast(FileStore | None, self._given["file_store"])
        if not self._common.files_bucket:
            return None
        client = storage_client(self._common.project_id)
        self._stack.callback(client.close)
        return CloudStorageFileStore(client, self._common.files_bucket)

    @cached_property
    def budgeted_work(self) -> BudgetedWork:
        """Calls whose cost a caller controls (ports/budgeted_work.py): the twin given, else
        processes of their own (``SCRAPEJOBS_BUDGETED_PROCESSES`` at once), made on first
        use."""
        if "budgeted_work" in self._given:
            return cast(BudgetedWork, self._given["budgeted_work"])
        work = BudgetedProcesses(self._common.budgeted_processes)
        self._stack.push_async_callback(work.close)
        return work

    gate = OnFirestore[HostGate](FirestoreHostGate)
    webhook_log = OnFirestore[WebhookLog](FirestoreWebhookLog)
