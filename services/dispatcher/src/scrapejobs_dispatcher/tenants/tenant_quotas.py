"""Quotas per tenant and what each tenant has used: its quotas (``pages_per_day``, held by
the submission rules' daily_quota.py as work is accepted; ``pages_in_flight``, by the workers),
its pages fetched today, pages in flight, the ``ai`` stage's tokens and cost.

Figures come from the outcome totals the workers write per tenant in their settle commits, so
``pages_today`` counts what the sites served (as Firecrawl's credits do: a page with a
response, whatever its status; not a reused page, a refused fetch or a retry). A quota is read
at most every ``recheck_s`` per instance.
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field
from datetime import datetime

from scrapejobs_dispatcher.tenants.usage import MAX_OPEN_JOBS, tokens_of
from scrapejobs_shared.domain.clock import Clock
from scrapejobs_shared.domain.model_usage import ModelPrices
from scrapejobs_shared.domain.outcome_stats import DAY, Totals, day_of
from scrapejobs_shared.errors import OverQuota
from scrapejobs_shared.ports.outcome_stats import StatsReader
from scrapejobs_shared.ports.tenant_quotas import Quota, TenantQuotas

RECHECK_S = 5.0
LISTED = 1000  # tenants with a quota of their own listed at most


class QuotaExceeded(OverQuota):
    """A submission over the tenant's daily quota: a 429 with ``retry_after_s``."""

    def __init__(self, tenant: str, quota: str, limit: int, retry_after_s: int) -> None:
        super().__init__(
            f"tenant {tenant!r}: this submission's pages would pass its {quota} quota ({limit} "
            f"pages a day, UTC, counted as work is accepted); it renews in {retry_after_s} s"
        )
        self.quota = quota
        self.field = quota
        self.retry_after_s = retry_after_s

    def headers(self) -> dict[str, str]:
        return {"Retry-After": str(self.retry_after_s)}


def renews_in(now: datetime) -> int:
    """Seconds until the quota day (UTC) after ``now`` begins."""
    return max(1, int((day_of(now) + DAY - now).total_seconds()) + 1)


@dataclass(frozen=True, slots=True)
class TenantUsage:
    tenant: str
    pages_today: int
    pages_in_flight: int
    quota: Quota
    own_quota: bool  # an admin set it (else the deployment's defaults)
    ai_tokens: int
    ai_cost: float | None
    screenshots: int = 0  # taken today (kept in the files bucket)
    proxied_pages: dict[str, int] = field(default_factory=dict)  # today, by the proxy's tier
    searches: int = 0  # asked today (/v2/search, a job's or a monitor's search)
    search_credits: int = 0  # what their results cost (a credit a started ten)
    ocr_pages: int = 0  # documents' pages read by OCR today (their weight is in pages_today)


@dataclass(eq=False)
class Quotas:
    store: TenantQuotas
    stats: StatsReader
    clock: Clock
    defaults: Quota
    prices: ModelPrices | None = None
    recheck_s: float = RECHECK_S
    _quotas: dict[str, tuple[Quota | None, float]] = field(init=False, default_factory=dict)

    async def quota_of(self, tenant: str) -> tuple[Quota, bool]:
        """The tenant's quota, and whether it is its own (else the defaults)."""
        cached = self._quotas.get(tenant)
        if cached is not None and cached[1] > time.monotonic():
            own = cached[0]
        else:
            own = await self.store.quota_of(tenant)
            if len(self._quotas) > 10_000:
                self._quotas.clear()
            self._quotas[tenant] = (own, time.monotonic() + self.recheck_s)
        return (own, True) if own is not None else (self.defaults, False)

    async def set_quota(self, tenant: str, quota: Quota) -> None:
        await self.store.set_quota(tenant, quota)
        self._quotas[tenant] = (quota, time.monotonic() + self.recheck_s)

    async def own_quotas(self) -> list[tuple[str, Quota]]:
        return list(await self.store.quotas(LISTED))

    async def usage(self, tenant: str) -> TenantUsage:
        """What ``tenant`` used today (read now), and its quota."""
        quota, own = await self.quota_of(tenant)
        now = self.clock()
        totals = await self._day(tenant, now)
        work = await self.stats.open_work(MAX_OPEN_JOBS, tenant)
        cost = None if self.prices is None else self.prices.cost_of(totals.ai)
        return TenantUsage(
            tenant=tenant,
            pages_today=totals.page_credits,
            pages_in_flight=work.running,
            quota=quota,
            own_quota=own,
            ai_tokens=tokens_of(totals),
            ai_cost=cost,
            screenshots=totals.metered.screenshots,
            proxied_pages=totals.metered.proxied(),
            searches=totals.metered.searches,
            search_credits=totals.metered.search_credits,
            ocr_pages=totals.metered.ocr_pages,
        )

    async def _day(self, tenant: str, now: datetime) -> Totals:
        today = day_of(now)
        return (await self.stats.day_totals([today], now, tenant))[today]
