"""The store's twins behind the limits model: each port the services use is its memory twin,
and each call that writes is first charged to the document ledger with the documents the
Firestore adapter writes for it (``firestore_layout.py``), on the simulated clock.

A refused commit fails the way the Firestore adapter does: a transaction is tried again in the
adapter's rounds (``in_transaction``: the library's immediate attempts, then a pause that
doubles each round) and ends ``Contended``; a blind write is ``Contended`` at once; a guarded
write that lost (the host gate's slot and pace documents) is a refusal the caller already
handles. The twin runs only once the ledger took every commit of the call, so a refused call
changed nothing, as in Firestore (a guarded write the adapter lets go, a slot's release, is
left undone: the lease lapses instead)."""

from __future__ import annotations

import asyncio
import random
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import Any, cast

from google.api_core import exceptions as gexc

from scrapejobs_scale.document_ledger import DocumentLedger
from scrapejobs_scale.firestore_layout import (
    HeldBatchesLayout,
    HostGateLayout,
    Layout,
    QuotaLedgerLayout,
    Reads,
    StoreLayout,
    Write,
)
from scrapejobs_scale.virtual_clock import VirtualClock
from scrapejobs_shared.adapters.firestore.store_base import (
    TRANSACTION_ATTEMPTS,
    TRANSACTION_PAUSE_CAP_S,
    TRANSACTION_PAUSE_S,
    TRANSACTION_ROUNDS,
)
from scrapejobs_shared.adapters.memory.api_keys import MemoryApiKeyStore
from scrapejobs_shared.adapters.memory.budgeted_work import InlineWork
from scrapejobs_shared.adapters.memory.held_batches import MemoryHeldBatches
from scrapejobs_shared.adapters.memory.host_gate import MemoryHostGate
from scrapejobs_shared.adapters.memory.idempotency import MemoryIdempotencyKeys
from scrapejobs_shared.adapters.memory.job_store import MemoryJobStore
from scrapejobs_shared.adapters.memory.monitor_checks import MemoryMonitorChecks
from scrapejobs_shared.adapters.memory.monitor_store import MemoryMonitorStore
from scrapejobs_shared.adapters.memory.quota_ledger import MemoryQuotaLedger
from scrapejobs_shared.adapters.memory.session_revocations import MemorySessionRevocations
from scrapejobs_shared.adapters.memory.tenant_proxies import MemoryTenantProxies
from scrapejobs_shared.adapters.memory.tenant_quotas import MemoryTenantQuotas
from scrapejobs_shared.adapters.memory.webhooks import MemoryWebhookLog, MemoryWebhookOutbox
from scrapejobs_shared.ports.dependency_unavailable import FIRESTORE, Contended


@dataclass
class Twins:
    """The memory twins, unlimited: what the simulation reads its figures from."""

    store: MemoryJobStore
    gate: MemoryHostGate
    held_batches: MemoryHeldBatches
    quota_ledger: MemoryQuotaLedger
    idempotency_keys: MemoryIdempotencyKeys
    monitor_checks: MemoryMonitorChecks
    monitor_store: MemoryMonitorStore

    @classmethod
    def new(cls) -> Twins:
        store = MemoryJobStore()
        checks = MemoryMonitorChecks()
        return cls(
            store,
            MemoryHostGate(random_slots=True, rests=True),
            MemoryHeldBatches(store),
            MemoryQuotaLedger(),
            MemoryIdempotencyKeys(),
            checks,
            MemoryMonitorStore(checks),
        )


class Limited:
    """``twin`` with each method ``layout`` names charged to ``ledger`` before it runs."""

    def __init__(
        self,
        twin: object,
        layout: Layout,
        ledger: DocumentLedger,
        clock: VirtualClock,
        reads: Reads | None = None,
    ) -> None:
        self._twin = twin
        self._layout = layout
        self._reads = reads or {}
        self._ledger = ledger
        self._clock = clock
        self._rng = random.Random(11)

    def __getattr__(self, name: str) -> Any:
        """The twin's attribute; a method the layout names, wrapped once and kept on this
        object (so the next look finds it without coming here)."""
        found = getattr(self._twin, name)
        writes = self._layout.get(name)
        reads = self._reads.get(name)
        if reads is None and writes is None:
            return found
        if reads is not None:
            found = self._reading(found, reads)
        if writes is not None:
            found = self._charged(found, writes)
        setattr(self, name, found)
        return found

    def _reading(self, method: Callable[..., Any], reads: Callable[..., int]) -> Any:
        async def call(*args: Any, **kwargs: Any) -> Any:
            self._ledger.read(reads(args, kwargs))
            return await method(*args, **kwargs)

        return call

    def _charged(self, method: Callable[..., Awaitable[Any]], writes: Write) -> Any:
        async def call(*args: Any, **kwargs: Any) -> Any:
            if writes.after:  # the adapter writes only once the twin's answer says so
                answer = await method(*args, **kwargs)
                commits = writes.commits(args, kwargs, answer)
                if commits and not await self._commit(commits, writes.kind):
                    return await writes.lost(self._twin, answer)
                return answer
            commits = writes.commits(args, kwargs, None)
            if commits and not await self._commit(commits, writes.kind):
                if writes.kind == "guarded":  # the adapter takes a lost guarded write quietly
                    return None
                raise Contended(FIRESTORE, self._ledger.last_busy)
            return await method(*args, **kwargs)

        return call

    async def _commit(self, commits: list[list[str]], kind: str) -> bool:
        """Every commit taken (True), or the call refused (False) after the adapter's tries."""
        rounds = TRANSACTION_ROUNDS if kind == "transaction" else 1
        attempts = TRANSACTION_ATTEMPTS if kind == "transaction" else 1
        for round_ in range(rounds):
            for _ in range(attempts):
                try:
                    for paths in commits:
                        self._ledger.commit(paths, self._clock.now_s)
                    return True
                except gexc.Aborted:
                    continue
            if round_ + 1 < rounds:
                bound = min(TRANSACTION_PAUSE_CAP_S, TRANSACTION_PAUSE_S * 2**round_)
                await asyncio.sleep(self._rng.uniform(0, bound))
        return False


class LimitedPorts:
    """Each port the services are given: its twin, limited where the layout says it writes."""

    def __init__(self, ledger: DocumentLedger, clock: VirtualClock) -> None:
        self.ledger = ledger
        self.clock = clock
        self.twins = twins = Twins.new()
        store, gate = StoreLayout(twins.store), HostGateLayout()
        self.store: Any = self.limited(twins.store, store.layout(), store.reads())
        self.gate: Any = self.limited(twins.gate, gate.layout(), gate.reads())
        held = HeldBatchesLayout(twins.store)
        self.held_batches: Any = self.limited(twins.held_batches, held.layout(), held.reads())
        quotas = QuotaLedgerLayout()
        self.quota_ledger: Any = self.limited(twins.quota_ledger, quotas.layout(), quotas.reads())
        self.idempotency_keys: Any = twins.idempotency_keys
        self.monitor_checks: Any = twins.monitor_checks
        self.monitor_store: Any = twins.monitor_store
        self.webhook_outbox = MemoryWebhookOutbox()
        self.webhook_log = MemoryWebhookLog()
        self.session_revocations = MemorySessionRevocations()
        self.api_keys = MemoryApiKeyStore()
        self.tenant_quotas = MemoryTenantQuotas()
        self.tenant_proxies = MemoryTenantProxies()
        self.budgeted_work = InlineWork()

    def limited(self, twin: object, layout: Layout, reads: Reads | None = None) -> Any:
        return cast(Any, Limited(twin, layout, self.ledger, self.clock, reads))
