"""The admin and tenant calls of the API client: keys (admin), quotas and proxy pools (admin)
and usage.
Mixed into ``Client``, whose ``_send`` and ``_get`` they use."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import httpx

from scrapejobs_client.models import (
    ApiKey,
    CreatedApiKey,
    TenantProxies,
    TenantQuota,
    Tenants,
    TenantUsage,
)
from scrapejobs_client.paths import segment


class TenantsApi:
    _send: Callable[..., httpx.Response]  # Client's: send with retries, raise non-2xx
    _get: Callable[..., Any]  # Client's: a GET's JSON

    # --- keys (admin keys only) ----------------------------------------------------------------

    def create_key(self, tenant: str, role: str = "member", name: str = "") -> CreatedApiKey:
        """``POST /v1/keys``: a new key for ``tenant`` (its ``key`` is shown this once)."""
        body = {"tenant": tenant, "role": role, "name": name}
        return CreatedApiKey.model_validate(self._send("POST", "/v1/keys", json=body).json())

    def list_keys(self, tenant: str | None = None, limit: int = 200) -> list[ApiKey]:
        """``GET /v1/keys``: keys made at run time, newest first (never the keys themselves)."""
        listed = self._get("/v1/keys", {"tenant": tenant, "limit": limit})["keys"]
        return [ApiKey.model_validate(entry) for entry in listed]

    def revoke_key(self, key_id: str) -> None:
        """``DELETE /v1/keys/{id}``: refused on every instance within seconds."""
        self._send("DELETE", f"/v1/keys/{segment(key_id)}")

    # --- tenants: quotas and usage --------------------------------------------------------------

    def usage(self, tenant: str | None = None) -> list[TenantUsage]:
        """``GET /v1/usage``: the key's tenant's day (an admin key: every tenant's, or one)."""
        listed = self._get("/v1/usage", {"tenant": tenant})["usage"]
        return [TenantUsage.model_validate(entry) for entry in listed]

    def tenants(self) -> Tenants:
        """``GET /v1/tenants`` (admin): the default quota and the tenants with their own."""
        return Tenants.model_validate(self._get("/v1/tenants"))

    def set_quota(self, tenant: str, pages_per_day: int, pages_in_flight: int = 0) -> TenantQuota:
        """``PUT /v1/tenants/{tenant}`` (admin): the tenant's own quota (0: no limit)."""
        body = {"pages_per_day": pages_per_day, "pages_in_flight": pages_in_flight}
        response = self._send("PUT", f"/v1/tenants/{segment(tenant)}", json=body)
        return TenantQuota.model_validate(response.json())

    # --- tenants' own proxy pools (admin keys, where SCRAPEJOBS_TENANT_PROXIES is on) ---------

    def tenant_proxies(self, tenant: str) -> TenantProxies:
        """``GET /v1/tenants/{tenant}/proxies``: its own pool, else the deployment's."""
        return TenantProxies.model_validate(self._get(_proxies(tenant)))

    def set_tenant_proxies(self, tenant: str, proxies: list[dict[str, Any]]) -> TenantProxies:
        """``PUT /v1/tenants/{tenant}/proxies``: ``proxies`` (``{url, country, tier}``) become
        its own pool, used for its jobs instead of the deployment's."""
        response = self._send("PUT", _proxies(tenant), json={"proxies": proxies})
        return TenantProxies.model_validate(response.json())

    def remove_tenant_proxies(self, tenant: str) -> TenantProxies:
        """``DELETE /v1/tenants/{tenant}/proxies``: its jobs go through the deployment's again."""
        return TenantProxies.model_validate(self._send("DELETE", _proxies(tenant)).json())


def _proxies(tenant: str) -> str:
    return f"/v1/tenants/{segment(tenant)}/proxies"
