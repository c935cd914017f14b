"""REST resources: /v1/tenants (quotas, admin only) and /v1/usage (what a tenant used)."""

from __future__ import annotations

from typing import Annotated

from fastapi import Path, Query
from pydantic import BaseModel, ConfigDict, Field, field_validator

from scrapejobs_dispatcher.dependencies import QuotasDep
from scrapejobs_dispatcher.edge.record_view import RecordView
from scrapejobs_dispatcher.routes.jobs import ERRORS
from scrapejobs_dispatcher.routes.native_router import native_router
from scrapejobs_dispatcher.tenants.authentication import AdminDep, CallerDep
from scrapejobs_shared.domain.tenancy import DEFAULT_TENANT, TENANT_PATTERN
from scrapejobs_shared.ports.tenant_quotas import Quota

router = native_router("/v1", "tenants")
TenantPath = Annotated[str, Path(pattern=TENANT_PATTERN, description="The tenant's name")]


class QuotaBody(RecordView):
    model_config = ConfigDict(extra="forbid", from_attributes=True)

    pages_per_day: int = Field(
        ge=0, le=10**12, description="Pages fetched per UTC day (0: no limit)"
    )
    pages_in_flight: int = Field(
        default=0, ge=0, le=10**6, description="Pages fetched at once (0: no limit)"
    )

    @field_validator("pages_per_day", "pages_in_flight", mode="before")
    @classmethod
    def _a_number_not_a_boolean(cls, value: object) -> object:
        """JSON's ``true`` is not the integer 1 (``250.0`` is an integer, as JSON Schema says)."""
        if isinstance(value, bool | str):
            raise ValueError("must be an integer")
        return value


class TenantView(BaseModel):
    tenant: str
    quota: QuotaBody
    own_quota: bool = Field(description="Set for this tenant (else the deployment's defaults)")


class TenantList(BaseModel):
    defaults: QuotaBody = Field(description="The quota of a tenant without one of its own")
    tenants: list[TenantView]


class UsageView(RecordView):
    tenant: str
    pages_today: int = Field(
        description="Pages its sites served today (UTC), as the quota counts them: a page "
        "each, one more a PDF page read, SCRAPEJOBS_OCR_PAGE_WEIGHT more a page read by OCR"
    )
    pages_in_flight: int = Field(description="Pages being fetched now")
    quota: QuotaBody
    own_quota: bool
    ai_tokens: int = Field(description="Model tokens its ai stages used today")
    ai_cost: float | None = Field(description="What they cost (None without prices set)")
    screenshots: int = Field(default=0, description="Screenshots its pages took today")
    proxied_pages: dict[str, int] = Field(
        default_factory=dict,
        description="Pages that came through a proxy today, by the proxy's tier (basic, stealth)",
    )
    searches: int = Field(default=0, description="Searches it asked today")
    search_credits: int = Field(
        default=0,
        description="What their results cost today: a credit a started ten results (beside "
        "pages_today; not counted against the quota of pages)",
    )
    ocr_pages: int = Field(
        default=0,
        description="Documents' pages its jobs read by OCR today (scans, images); each costs "
        "SCRAPEJOBS_OCR_PAGE_WEIGHT credits beside the page, counted in pages_today",
    )


class UsageList(BaseModel):
    usage: list[UsageView]


@router.put("/tenants/{tenant}", response_model=TenantView, responses=ERRORS)
async def set_quota(
    tenant: TenantPath, body: QuotaBody, quotas: QuotasDep, _: AdminDep
) -> TenantView:
    """Set the tenant's quota (over the defaults); every instance applies it within 5 s."""
    quota = Quota(body.pages_per_day, body.pages_in_flight)
    await quotas.set_quota(tenant, quota)
    return TenantView(tenant=tenant, quota=QuotaBody.of(quota), own_quota=True)


@router.get("/tenants", response_model=TenantList, responses=ERRORS)
async def list_tenants(quotas: QuotasDep, _: AdminDep) -> TenantList:
    """The default quota, and the tenants with a quota of their own."""
    own = await quotas.own_quotas()
    return TenantList(
        defaults=QuotaBody.of(quotas.defaults),
        tenants=[TenantView(tenant=t, quota=QuotaBody.of(q), own_quota=True) for t, q in own],
    )


@router.get("/usage", response_model=UsageList, responses=ERRORS)
async def usage(
    quotas: QuotasDep,
    caller: CallerDep,
    tenant: Annotated[
        str | None,
        Query(
            pattern=TENANT_PATTERN,
            description="Admin keys: this tenant's (default: the default tenant's and every "
            "tenant's with a quota of its own)",
        ),
    ] = None,
) -> UsageList:
    """What the caller's tenant used today against its quota (an admin: every tenant's)."""
    if not caller.admin:
        tenants = [caller.tenant]
    elif tenant is not None:
        tenants = [tenant]
    else:
        tenants = [DEFAULT_TENANT] + [
            t for t, _ in await quotas.own_quotas() if t != DEFAULT_TENANT
        ]
    return UsageList(usage=[UsageView.of(await quotas.usage(t)) for t in tenants])
