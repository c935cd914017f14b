"""The worker's push endpoints accept only the push service account's OIDC tokens."""

from __future__ import annotations

import time
from collections.abc import AsyncIterator

import httpx
import pytest

from scrapejobs_shared.adapters.memory.host_gate import MemoryHostGate
from scrapejobs_shared.adapters.memory.job_store import MemoryJobStore
from scrapejobs_shared.adapters.memory.publisher import MemoryTaskPublisher
from scrapejobs_shared.adapters.memory.webhooks import MemoryWebhookLog, MemoryWebhookOutbox
from scrapejobs_worker.delivery.push_auth import StaticJwks
from scrapejobs_worker.main import create_app
from scrapejobs_worker.settings import WorkerSettings
from support.jobs import push_envelope
from support.oidc import (
    AUDIENCE,
    JWKS,
    SERVICE_ACCOUNT_EMAIL,
    generate_signing_key,
    id_token_claims,
    sign_id_token,
)
from support.worker_fakes import ScriptedFetcher, setup_job

OTHER_KEY = generate_signing_key("other")


@pytest.fixture
async def worker(
    request,
) -> AsyncIterator[tuple[httpx.AsyncClient, MemoryJobStore, ScriptedFetcher]]:
    store, fetcher = MemoryJobStore(), ScriptedFetcher(200)
    await setup_job(store)
    settings = WorkerSettings(
        push_auth="oidc", push_audience=AUDIENCE, push_service_account=SERVICE_ACCOUNT_EMAIL
    )
    app = create_app(
        settings,
        {
            "store": store,
            "fetcher": fetcher,
            "push_keys": StaticJwks(JWKS),
            "gate": MemoryHostGate(),
            "publisher": MemoryTaskPublisher(),
            "webhook_outbox": MemoryWebhookOutbox(),
            "webhook_log": MemoryWebhookLog(),
        },
    )
    async with app.router.lifespan_context(app):
        transport = httpx.ASGITransport(app=app)
        async with httpx.AsyncClient(transport=transport, base_url="http://w") as client:
            yield client, store, fetcher


def _bearer(**claims) -> dict[str, str]:
    return {"Authorization": f"Bearer {sign_id_token(id_token_claims(**claims))}"}


REJECTED = {
    "missing": ({}, 401),
    "not bearer": ({"Authorization": "Basic abc"}, 401),
    "wrong audience": (_bearer(aud="https://elsewhere.example/"), 403),
    "foreign email": (_bearer(email="attacker@evil.iam.gserviceaccount.com"), 403),
    "unverified email": (_bearer(email_verified=False), 403),
    "expired": (_bearer(iat=time.time() - 7200, exp=time.time() - 3600), 403),
    "foreign key": (
        {"Authorization": f"Bearer {sign_id_token(id_token_claims(), key=OTHER_KEY)}"},
        403,
    ),
}


@pytest.mark.parametrize(("headers", "status"), REJECTED.values(), ids=REJECTED.keys())
@pytest.mark.parametrize("path", ["/pubsub/push", "/pubsub/dead-letter", "/pubsub/webhook"])
async def test_rejected_tokens_touch_nothing(worker, headers, status, path) -> None:
    client, store, fetcher = worker
    response = await client.post(
        path, json=push_envelope("j", "b", [("t", "http://a.example/")]), headers=headers
    )
    assert response.status_code == status
    assert "push authentication failed" in response.json()["error"]["message"]
    assert fetcher.calls == [] and store.batches["j"]["b"].items[0].status == "queued"


async def test_valid_token_is_processed(worker) -> None:
    client, store, fetcher = worker
    envelope = push_envelope("j", "b", [("t", "http://a.example/")])
    response = await client.post("/pubsub/push", json=envelope, headers=_bearer())
    assert response.status_code == 204
    assert len(fetcher.calls) == 1 and store.results["j"]["t"].status == "succeeded"


async def test_health_needs_no_token(worker) -> None:
    client, _, _ = worker
    assert (await client.get("/healthz")).status_code == 200
