"""REST resource: /v1/tenants/{tenant}/proxies, a tenant's own proxy pool (admin only; served
where SCRAPEJOBS_TENANT_PROXIES lets tenants have one: shared tenant_pools.py). Its jobs go through
it instead of the deployment's. Answered by label (``scheme://host:port``), country and tier:
a credential given is kept, never answered, logged or put in an error."""

from __future__ import annotations

from typing import Annotated, Literal

from fastapi import Depends, Path
from pydantic import BaseModel, ConfigDict, Field

from scrapejobs_dispatcher.dependencies import app_state
from scrapejobs_dispatcher.routes.jobs import ERRORS
from scrapejobs_dispatcher.routes.native_router import native_router
from scrapejobs_dispatcher.tenants.authentication import AdminDep
from scrapejobs_shared.domain.tenancy import TENANT_PATTERN
from scrapejobs_shared.options.proxy_pools import MAX_PROXIES, ProxyPool, pool_of_entries
from scrapejobs_shared.tenant_pools import ProxyPools

router = native_router("/v1", "tenants")
PORT = r"(6553[0-5]|655[0-2][0-9]|65[0-4][0-9]{2}|6[0-4][0-9]{3}|[1-5][0-9]{4}|[0-9]{1,4})"
HOST = r"[A-Za-z0-9._~%-]+"  # a name or an IPv4 address (an IPv6 one: SCRAPEJOBS_PROXIES)
USERINFO = r"[A-Za-z0-9._~%!$&'()*+,;=:-]*@"  # RFC 3986's characters (others %-encoded)
URL_PATTERN = rf"^(?i:https?|socks5)://({USERINFO})?{HOST}(:{PORT})?/?$"
TenantPath = Annotated[str, Path(pattern=TENANT_PATTERN, description="The tenant's name")]
PoolsDep = Annotated[ProxyPools, Depends(app_state("proxy_pools"))]


class ProxyGiven(BaseModel):
    model_config = ConfigDict(extra="forbid", strict=True)

    url: str = Field(
        max_length=2048,
        pattern=URL_PATTERN,
        description="http://, https:// or socks5://, with credentials if any "
        "(user:password@host:port; a host name or an IPv4 address)",
    )
    country: str | None = Field(
        default=None, pattern=r"^[A-Za-z]{2}$", description="ISO 3166-1 alpha-2 (DE, US)"
    )
    tier: Literal["basic", "stealth"] = Field(
        default="basic", description="basic, or stealth: a pool you label so"
    )


class PoolBody(BaseModel):
    model_config = ConfigDict(extra="forbid", strict=True)

    proxies: list[ProxyGiven] = Field(
        min_length=1, max_length=MAX_PROXIES, description="The tenant's proxies, in turn"
    )


class ProxyListed(BaseModel):
    proxy: str = Field(description="The proxy's label, scheme://host:port (no credentials)")
    country: str | None
    tier: Literal["basic", "stealth"]


class PoolView(BaseModel):
    tenant: str
    own_pool: bool = Field(
        description="The tenant has a pool of its own (else its jobs go through the "
        "deployment's, listed here)"
    )
    proxies: list[ProxyListed]

    @classmethod
    def of(cls, tenant: str, pool: ProxyPool, own: bool) -> PoolView:
        listed = [ProxyListed(proxy=s.label, country=s.country, tier=s.tier) for s in pool.servers]
        return cls(tenant=tenant, own_pool=own, proxies=listed)


@router.put("/tenants/{tenant}/proxies", response_model=PoolView, responses=ERRORS)
async def set_pool(tenant: TenantPath, body: PoolBody, pools: PoolsDep, _: AdminDep) -> PoolView:
    """Give the tenant a proxy pool of its own (replacing any it had): its jobs go through it
    instead of the deployment's, on every instance within 5 s."""
    entries = [given.model_dump(exclude_none=True) for given in body.proxies]
    pool = pool_of_entries(entries, "proxies", owner=tenant)
    await pools.set_pool(tenant, pool)
    return PoolView.of(tenant, pool, own=True)


@router.get("/tenants/{tenant}/proxies", response_model=PoolView, responses=ERRORS)
async def get_pool(tenant: TenantPath, pools: PoolsDep, _: AdminDep) -> PoolView:
    """The proxies the tenant's jobs go through: its own pool, else the deployment's."""
    own = await pools.own_pool(tenant, fresh=True)
    return PoolView.of(tenant, own or pools.deployment, own=own is not None)


@router.delete("/tenants/{tenant}/proxies", response_model=PoolView, responses=ERRORS)
async def remove_pool(tenant: TenantPath, pools: PoolsDep, _: AdminDep) -> PoolView:
    """Take the tenant's own pool away: its jobs go through the deployment's again."""
    await pools.remove_pool(tenant)
    return PoolView.of(tenant, pools.deployment, own=False)
