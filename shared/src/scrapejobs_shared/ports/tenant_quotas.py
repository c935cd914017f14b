"""Quotas per tenant: what an admin set for a tenant, over the deployment's defaults."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Protocol


@dataclass(frozen=True, slots=True)
class Quota:
    """0 means no limit."""

    pages_per_day: int = 0  # pages fetched per UTC day
    pages_in_flight: int = 0  # pages fetched at once, across every worker


class TenantQuotas(Protocol):
    async def quota_of(self, tenant: str) -> Quota | None:
        """The tenant's own quota (None: it has none, the defaults hold)."""

    async def set_quota(self, tenant: str, quota: Quota) -> None: ...

    async def quotas(self, limit: int) -> Sequence[tuple[str, Quota]]:
        """Tenants with a quota of their own, by name (at most ``limit``)."""
