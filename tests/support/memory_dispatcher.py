"""The dispatcher over in-memory adapters (no emulators): the app, and an httpx client on it."""

from __future__ import annotations

from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Any, cast

import httpx
from fastapi import FastAPI

from scrapejobs_dispatcher.adapters import Overrides
from scrapejobs_dispatcher.main import create_app
from scrapejobs_dispatcher.settings import DispatcherSettings
from scrapejobs_shared.adapters.memory.api_keys import MemoryApiKeyStore
from scrapejobs_shared.adapters.memory.budgeted_work import InlineWork
from scrapejobs_shared.adapters.memory.held_batches import MemoryHeldBatches
from scrapejobs_shared.adapters.memory.host_gate import MemoryHostGate
from scrapejobs_shared.adapters.memory.idempotency import MemoryIdempotencyKeys
from scrapejobs_shared.adapters.memory.job_store import MemoryJobStore
from scrapejobs_shared.adapters.memory.monitor_checks import MemoryMonitorChecks
from scrapejobs_shared.adapters.memory.monitor_store import MemoryMonitorStore
from scrapejobs_shared.adapters.memory.publisher import MemoryTaskPublisher
from scrapejobs_shared.adapters.memory.quota_ledger import MemoryQuotaLedger
from scrapejobs_shared.adapters.memory.session_revocations import MemorySessionRevocations
from scrapejobs_shared.adapters.memory.tenant_proxies import MemoryTenantProxies
from scrapejobs_shared.adapters.memory.tenant_quotas import MemoryTenantQuotas
from scrapejobs_shared.adapters.memory.webhooks import MemoryWebhookLog, MemoryWebhookOutbox
from scrapejobs_shared.observability.telemetry import Telemetry


def memory_dispatcher(
    store: MemoryJobStore,
    settings: DispatcherSettings | None = None,
    telemetry: Telemetry | None = None,
    **adapters: Any,
) -> FastAPI:
    """``create_app`` with every adapter in memory (the store also answers stats); keyword
    arguments replace any of them (a publisher that fails, a Firestore stats reader...)."""
    defaults: dict[str, Any] = {
        "store": store,
        "held_batches": MemoryHeldBatches(store),
        "publisher": MemoryTaskPublisher(),
        "gate": MemoryHostGate(),
        "idempotency_keys": MemoryIdempotencyKeys(),
        "stats_reader": store,
        "usage_meter": store,
        "webhook_outbox": MemoryWebhookOutbox(),
        "webhook_log": MemoryWebhookLog(),
        "worker_directory": store,
        "session_revocations": MemorySessionRevocations(),
        "api_keys": MemoryApiKeyStore(),
        "tenant_quotas": MemoryTenantQuotas(),
        "tenant_proxies": MemoryTenantProxies(),
        "quota_ledger": MemoryQuotaLedger(),
        "budgeted_work": InlineWork(),
        "file_store": None,  # none unless a test gives one (with settings naming a bucket)
        **_monitor_adapters(),
    }
    # the dashboard keeps no figures here unless a test asks: what a test just changed shows;
    # no files bucket, whatever the environment says (a stack started in the same session
    # sets SCRAPEJOBS_FILES_BUCKET)
    settings = settings or DispatcherSettings(
        auth_mode="none", dashboard_cache_s=0, files_bucket=""
    )
    overrides = cast(Overrides, defaults | adapters)
    return create_app(settings, overrides, telemetry)


def _monitor_adapters() -> dict[str, Any]:
    checks = MemoryMonitorChecks()
    return {"monitor_store": MemoryMonitorStore(checks), "monitor_checks": checks}


@asynccontextmanager
async def memory_client(
    store: MemoryJobStore, settings: DispatcherSettings | None = None, **adapters: Any
) -> AsyncIterator[httpx.AsyncClient]:
    app = memory_dispatcher(store, settings, **adapters)
    async with app.router.lifespan_context(app):
        transport = httpx.ASGITransport(app=app)
        async with httpx.AsyncClient(transport=transport, base_url="http://test") as client:
            yield client
