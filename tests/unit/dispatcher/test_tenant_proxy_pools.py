"""A tenant's own proxy pool (routes/tenant_proxies.py, shared tenant_pools.py): set by admin
keys alone, answered by label (a credential appears in no answer, error or log), used for that
tenant's jobs instead of the deployment's and never for another tenant's, shown on the
dashboard's Tenants page; without
SCRAPEJOBS_TENANT_PROXIES the resource does not exist."""

from __future__ import annotations

import json
import logging

import httpx
import pytest
from pydantic import SecretStr

from scrapejobs_dispatcher.settings import DispatcherSettings
from scrapejobs_dispatcher.tenants.api_keys import generate_api_key
from scrapejobs_shared.adapters.memory.api_keys import MemoryApiKeyStore
from scrapejobs_shared.adapters.memory.job_store import MemoryJobStore
from scrapejobs_shared.adapters.memory.tenant_proxies import MemoryTenantProxies
from support.memory_dispatcher import memory_client

ADMIN_KEY, ADMIN_DIGEST = generate_api_key()
DEPLOYMENT = json.dumps([{"url": "http://deploy:hunter2@proxy-de.example:3128", "country": "DE"}])
ACME = {
    "proxies": [
        {"url": "http://acme:p%40ss%3Aw0rd@proxy-fr.example:8080", "country": "fr"},
        {"url": "socks5://acme:hunter2@10.0.0.7:1080", "tier": "stealth"},
    ]
}
SECRETS = ("hunter2", "p%40ss", "p@ss")


def as_key(key: str) -> dict[str, str]:
    return {"Authorization": f"Bearer {key}"}


def settings(tenant_proxies: bool = True) -> DispatcherSettings:
    return DispatcherSettings(
        auth_mode="api_key",
        api_key_hashes=ADMIN_DIGEST,
        proxies=SecretStr(DEPLOYMENT),
        tenant_proxies=tenant_proxies,
        coalesce_window_ms=0,
    )


async def member_of(api: httpx.AsyncClient, tenant: str) -> dict[str, str]:
    made = await api.post(
        "/v1/keys", json={"tenant": tenant, "role": "member"}, headers=as_key(ADMIN_KEY)
    )
    assert made.status_code == 201, made.text
    return as_key(made.json()["key"])


def job(country: str) -> dict[str, object]:
    return {"url": "https://a.example/", "options": {"proxy": {"country": country}}}


async def test_a_tenants_pool_serves_that_tenant_alone_and_shows_no_credential(
    caplog: pytest.LogCaptureFixture,
) -> None:
    caplog.set_level(logging.DEBUG)
    store, pools = MemoryJobStore(), MemoryTenantProxies()
    admin = as_key(ADMIN_KEY)
    async with memory_client(
        store, settings(), api_keys=MemoryApiKeyStore(), tenant_proxies=pools
    ) as api:
        acme, other = await member_of(api, "acme"), await member_of(api, "other")
        refused = await api.put("/v1/tenants/acme/proxies", json=ACME, headers=acme)
        assert refused.status_code == 403  # admin keys alone
        given = await api.put("/v1/tenants/acme/proxies", json=ACME, headers=admin)
        assert given.status_code == 200, given.text
        assert given.json() == {
            "tenant": "acme",
            "own_pool": True,
            "proxies": [
                {"proxy": "http://proxy-fr.example:8080", "country": "FR", "tier": "basic"},
                {"proxy": "socks5://10.0.0.7:1080", "country": None, "tier": "stealth"},
            ],
        }
        # kept with its credentials, for the workers
        assert pools.kept["acme"].servers[0].password == "p@ss:w0rd"

        assert (await api.post("/v1/jobs", json=job("FR"), headers=acme)).status_code == 202
        theirs = await api.post("/v1/jobs", json=job("FR"), headers=other)
        assert theirs.status_code == 422 and theirs.json()["error"]["field"] == (
            "options.proxy.country"
        )
        # instead of the deployment's: acme no longer reaches its DE proxy
        assert (await api.post("/v1/jobs", json=job("DE"), headers=acme)).status_code == 422
        assert (await api.post("/v1/jobs", json=job("DE"), headers=other)).status_code == 202
        stealth = {"url": "https://a.example/", "options": {"proxy": {"tier": "stealth"}}}
        assert (await api.post("/v1/jobs", json=stealth, headers=acme)).status_code == 202
        assert (await api.post("/v1/jobs", json=stealth, headers=other)).status_code == 422

        shown = await api.get("/v1/tenants/acme/proxies", headers=admin)
        assert shown.json()["own_pool"] and len(shown.json()["proxies"]) == 2
        page = await api.get("/ui/tenants", headers=admin)
        assert page.status_code == 200
        assert "socks5://10.0.0.7:1080 (any country, stealth)" in page.text
        assert "http://proxy-de.example:3128 (DE, basic)" in page.text  # other's: the deployment's
        assert (await api.get("/ui/tenants", headers=acme)).status_code == 403
        taken = await api.delete("/v1/tenants/acme/proxies", headers=admin)
        assert taken.json() == {
            "tenant": "acme",
            "own_pool": False,
            "proxies": [
                {"proxy": "http://proxy-de.example:3128", "country": "DE", "tier": "basic"}
            ],
        }
        assert (await api.post("/v1/jobs", json=job("FR"), headers=acme)).status_code == 422
        assert (await api.post("/v1/jobs", json=job("DE"), headers=acme)).status_code == 202
        answers = [given.text, shown.text, taken.text, theirs.text, page.text]
    assert "acme" not in pools.kept
    for text in [*answers, caplog.text]:
        assert not any(secret in text for secret in SECRETS), text


@pytest.mark.parametrize(
    ("proxies", "field"),
    [
        ([{"url": "ftp://acme:hunter2@a.example:1"}], "proxies[0].url"),
        ([{"url": "http://acme:hunter2@a.example:1/path"}], "proxies[0].url"),
        (
            [{"url": "http://a.example:1"}, {"url": "http://acme:hunter2@b:1", "w": 1}],
            "proxies[1].w",
        ),
        ([{"url": "http://acme:hunter2@a.example:1", "country": "Germany"}], "proxies[0].country"),
        ([], "proxies"),
    ],
)
async def test_a_pool_that_cannot_be_read_is_a_422_without_its_credentials(
    proxies: list[dict[str, object]], field: str
) -> None:
    pools = MemoryTenantProxies()
    async with memory_client(
        MemoryJobStore(), settings(), api_keys=MemoryApiKeyStore(), tenant_proxies=pools
    ) as api:
        answer = await api.put(
            "/v1/tenants/acme/proxies", json={"proxies": proxies}, headers=as_key(ADMIN_KEY)
        )
    assert answer.status_code == 422, answer.text
    assert answer.json()["error"]["field"] == field and "hunter2" not in answer.text
    assert not pools.kept


async def test_without_tenant_pools_the_resource_does_not_exist_and_the_document_says_so() -> None:
    async with memory_client(
        MemoryJobStore(), settings(tenant_proxies=False), api_keys=MemoryApiKeyStore()
    ) as api:
        answer = await api.put("/v1/tenants/acme/proxies", json=ACME, headers=as_key(ADMIN_KEY))
        assert answer.status_code == 404
        document = (await api.get("/openapi.json")).json()
    assert "/v1/tenants/{tenant}/proxies" not in document["paths"]
    country = document["components"]["schemas"]["ProxyOptions"]["properties"]["country"]
    assert {"type": "string", "enum": ["DE"]} in country["anyOf"]  # the deployment's own


async def test_with_tenant_pools_the_document_offers_every_country() -> None:
    async with memory_client(MemoryJobStore(), settings(), api_keys=MemoryApiKeyStore()) as api:
        document = (await api.get("/openapi.json")).json()
    assert "/v1/tenants/{tenant}/proxies" in document["paths"]
    country = document["components"]["schemas"]["ProxyOptions"]["properties"]["country"]
    assert "enum" not in json.dumps(country)
