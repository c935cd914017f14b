"""What the dashboard's Tenants page shows of each tenant (pages.tenants): its day against its
quota and the proxies its jobs go through, by label (never a credential)."""

from __future__ import annotations

from dataclasses import dataclass

from scrapejobs_dispatcher.tenants.tenant_directory import TenantEntry


@dataclass(frozen=True, slots=True)
class TenantRow:
    tenant: str
    pages_today: int
    per_day: str
    in_flight: int
    at_once: str
    proxied: str  # pages through a proxy today, by tier
    searches: str  # searches today and their credits
    own_pool: bool
    proxies: tuple[str, ...]  # "label (country, tier)", one a proxy: never a credential


def tenant_row(entry: TenantEntry) -> TenantRow:
    usage = entry.usage
    proxied = " · ".join(f"{tier} {count}" for tier, count in sorted(usage.proxied_pages.items()))
    return TenantRow(
        tenant=usage.tenant,
        pages_today=usage.pages_today,
        per_day=str(usage.quota.pages_per_day or "no limit"),
        in_flight=usage.pages_in_flight,
        at_once=str(usage.quota.pages_in_flight or "no limit"),
        proxied=proxied or "none",
        searches=f"{usage.searches} ({usage.search_credits} credits)" if usage.searches else "none",
        own_pool=entry.own_pool,
        proxies=tuple(
            f"{s.label} ({s.country or 'any country'}, {s.tier})" for s in entry.pool.servers
        ),
    )
