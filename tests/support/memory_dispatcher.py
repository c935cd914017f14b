"""The dispatcher's REST API over in-memory adapters, as an httpx client (no emulators)."""

from __future__ import annotations

from collections.abc import AsyncIterator
from contextlib import asynccontextmanager

import httpx

from scrapejobs_dispatcher.main import create_app
from scrapejobs_dispatcher.settings import DispatcherSettings
from scrapejobs_shared.adapters.memory.host_gate import MemoryHostGate
from scrapejobs_shared.adapters.memory.idempotency import MemoryIdempotencyKeys
from scrapejobs_shared.adapters.memory.job_store import MemoryJobStore
from scrapejobs_shared.adapters.memory.publisher import MemoryTaskPublisher
from scrapejobs_shared.adapters.memory.webhooks import MemoryWebhookLog, MemoryWebhookOutbox


@asynccontextmanager
async def memory_client(
    store: MemoryJobStore,
    publisher: MemoryTaskPublisher | None = None,
    webhook_log: MemoryWebhookLog | None = None,
) -> AsyncIterator[httpx.AsyncClient]:
    app = create_app(
        DispatcherSettings(auth_mode="none"),
        store=store,
        publisher=publisher or MemoryTaskPublisher(),
        gate=MemoryHostGate(),
        idempotency_keys=MemoryIdempotencyKeys(),
        stats_reader=store,
        webhook_outbox=MemoryWebhookOutbox(),
        webhook_log=webhook_log or MemoryWebhookLog(),
    )
    async with app.router.lifespan_context(app):
        transport = httpx.ASGITransport(app=app)
        async with httpx.AsyncClient(transport=transport, base_url="http://test") as client:
            yield client
