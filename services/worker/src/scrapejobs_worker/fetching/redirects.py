"""Manual redirect handling: every hop's target is re-validated by the fetcher."""

from __future__ import annotations

import httpx

from scrapejobs_shared.ports.fetcher import PermanentFetchError
from scrapejobs_worker.fetching.request_validation import parse_target_url

REDIRECT_STATUSES = frozenset({301, 302, 303, 307, 308})

# What a job's headers may carry to another origin when a redirect leaves the job's own: only
# what describes the client. Everything else (Authorization, Cookie, X-Api-Key and any other
# header a job sets) was meant for the job's site and stays with it.
KEPT_ACROSS_ORIGINS = frozenset({"user-agent", "accept", "accept-language"})


def redirect_target(status: int, location: str | None, requested: httpx.URL) -> httpx.URL | None:
    """The vetted next URL if a response of ``status`` is a redirect with a Location, else
    None.

    A relative Location is resolved against the URL that was requested. Since the fetcher
    only ever sends GET, every redirect (303 included) is followed with a bodiless GET.
    """
    if status not in REDIRECT_STATUSES:
        return None
    if not location:
        return None
    try:
        target = requested.join(location)
    except (httpx.InvalidURL, ValueError) as exc:
        raise PermanentFetchError(
            f"invalid redirect Location {location!r}", reason="invalid_url"
        ) from exc
    return parse_target_url(target)


def headers_for_hop(
    headers: dict[str, str], previous: httpx.URL, target: httpx.URL
) -> dict[str, str]:
    """The headers for the next hop: all of them on the same origin; past a redirect to
    another origin only :data:`KEPT_ACROSS_ORIGINS` (and nothing more on later hops, whatever
    their origin)."""
    same_origin = (previous.scheme, previous.host, previous.port) == (
        target.scheme,
        target.host,
        target.port,
    )
    if same_origin:
        return headers
    return {k: v for k, v in headers.items() if k.lower() in KEPT_ACROSS_ORIGINS}
