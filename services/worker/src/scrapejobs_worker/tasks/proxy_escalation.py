"""``proxy: auto`` (options/proxy.py): a page that answered a bot challenge, a 403 or a 429
through the job's own route is asked once more, at once, through the stealth pool (of the job's
country, if it asked one), within the same host slot and the fetch's time. Where no stealth
proxy serves it, or that fetch fails, the first answer stands (the outcome policy judges it as
ever)."""

from __future__ import annotations

from dataclasses import replace

from scrapejobs_shared.extraction.blocked_pages import blocked_page
from scrapejobs_shared.extraction.unusable_pages import Unusable
from scrapejobs_shared.options.proxy_pools import ProxyChoice
from scrapejobs_shared.ports.fetcher import Fetcher, FetchError, FetchRequest, FetchResponse

ESCALATED_STATUSES = frozenset({403, 429})


def turned_away(response: FetchResponse) -> bool:
    """A challenge, a 403 or a 429: what a stealth proxy may get past."""
    if response.status in ESCALATED_STATUSES:
        return True
    blocked = blocked_page(response.status, response.headers, response.body, response.url)
    return blocked is not None and blocked.kind is Unusable.CHALLENGE


async def through_stealth(
    fetcher: Fetcher, request: FetchRequest, first: FetchResponse, timeout_s: float
) -> FetchResponse:
    """The page through the stealth pool, or ``first`` when that cannot be had."""
    route = request.route
    country = None if route.proxy is None else route.proxy.country
    stealth = replace(route, proxy=ProxyChoice("stealth", country))
    again = replace(request, route=stealth, timeout_s=timeout_s)
    try:
        return await fetcher.fetch(again)
    except FetchError:
        return first
