"""The port through which the worker's service logic fetches pages.

Service logic depends on this module only; the httpx adapter lives in ``fetching/``.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Protocol

from scrapejobs_shared.domain.browser_work import BrowserWork
from scrapejobs_shared.errors import WorkFailed
from scrapejobs_shared.extraction.browser_result import BrowserResult
from scrapejobs_shared.options.proxy_pools import ProxyChoice, ProxyTier
from scrapejobs_shared.options.render import RenderOptions


@dataclass(frozen=True, slots=True)
class FetchRoute:
    """How a job's requests reach a site, the same for its pages, its robots.txt and sitemaps
    and every request of a rendered page, so the site sees one route (``Politeness.route``)."""

    # False: a certificate that fails verification does not fail the fetch (the response says
    # so: ``tls_unverified``); every address check still applies
    verify_tls: bool = True
    # the proxies the requests go through (None: direct): a tunnel to the address the guard
    # vetted, never the name (options/proxy.py)
    proxy: ProxyChoice | None = None
    # whose pools serve ``proxy``: this tenant's own where it has one, else the deployment's
    # (shared tenant_pools.py)
    tenant: str | None = None
    # requests of one session (a job) to one host keep to one proxy while it is up, where the
    # deployment asks for it (SCRAPEJOBS_PROXY_STICKY)
    session: str | None = None

    def shared(self) -> FetchRoute:
        """What the route's answers (a robots.txt) depend on: not its session, and not its
        tenant when it goes direct."""
        return FetchRoute(self.verify_tls, self.proxy, self.tenant if self.proxy else None)


DIRECT = FetchRoute()


@dataclass(frozen=True, slots=True)
class FetchRequest:
    url: str
    headers: Mapping[str, str] = field(default_factory=dict)
    timeout_s: float = 30.0
    body: bytes | None = None  # sent with POST (a webhook), whose redirects are not followed
    render: RenderOptions | None = None  # a 2xx HTML document is rendered in a browser
    route: FetchRoute = DIRECT
    # what the browser does besides reading a rendered page (a screenshot), and where its files
    # are kept
    browser: BrowserWork | None = None
    # the browser context's settings a rendered page needs (its locale: options/location.py)
    browser_context: Mapping[str, str] = field(default_factory=dict)


@dataclass(frozen=True, slots=True)
class FetchResponse:
    """A fetched response, whatever its status code (4xx/5xx are responses, not errors)."""

    url: str  # the final URL after redirects
    status: int
    headers: Mapping[str, str]  # lower-cased names
    body: bytes  # decoded from Content-Encoding, capped
    elapsed_ms: int
    truncated: bool = False  # body was cut at the byte cap
    redirects: tuple[str, ...] = ()
    rendered_ms: int | None = None  # the body is the DOM a browser rendered, in this long
    tls_unverified: bool = False  # a hop's certificate failed verification (verify_tls off)
    browser: BrowserResult | None = None  # what the browser made besides the DOM (a screenshot)
    proxy: str | None = None  # the label of the proxy the response came through (None: direct)
    proxy_tier: ProxyTier | None = None  # and that proxy's tier

    @property
    def content_type(self) -> str:
        return self.headers.get("content-type", "")


class FetchError(WorkFailed):
    """A fetch that produced no usable response. ``reason`` is a short machine-readable code."""

    reason: str = "fetch_error"
    transient: bool = True
    host_fault: bool = True  # False: ours (a browser crashed), not counted against the host

    def __init__(self, detail: str, *, reason: str | None = None) -> None:
        super().__init__(detail)
        self.detail = detail
        if reason is not None:
            self.reason = reason


class TransientFetchError(FetchError):
    """Timeouts, connection errors, overall deadline exceeded: worth retrying."""

    reason = "network_error"
    transient = True


class PermanentFetchError(FetchError):
    """The request can never succeed as given (bad URL, too many redirects, refused header...)."""

    reason = "invalid_request"
    transient = False


class BlockedDestination(PermanentFetchError):
    """The destination resolves to an address we refuse to connect to (SSRF guard)."""

    reason = "blocked_destination"


class RenderTimeout(PermanentFetchError):
    """A rendered page did not settle (or its ``wait_for`` did not match) within the timeout."""

    reason = "render_timeout"


class ActionFailed(PermanentFetchError):
    """One of a page's browser actions could not be done (no element to click, a script that
    threw or ran too long): the page fails, saying which action and why."""

    reason = "action_failed"
    host_fault = False


class RenderIncomplete(TransientFetchError):
    """A rendered page shows nothing and some of its own requests failed on the way (a script's
    API call reset, the browser's network gone): the page was not built, so it is rendered
    again rather than failed ``empty_content``."""

    reason = "render_incomplete"
    host_fault = False


class ProxyUnavailable(TransientFetchError):
    """No proxy of those serving the request could be reached (each was tried, or is benched
    after failing): not the site's fault. The page is tried again later, never fetched
    directly instead."""

    reason = "proxy_unavailable"
    host_fault = False


class RendererBusy(TransientFetchError):
    """No browser page came free in time: the task is deferred (not an attempt)."""

    reason = "render_busy"
    host_fault = False


class RenderUnavailable(PermanentFetchError):
    """A page asked to be rendered where no browser is configured (a misrouted task)."""

    reason = "render_unavailable"


class Fetcher(Protocol):
    async def fetch(self, request: FetchRequest) -> FetchResponse: ...

    async def aclose(self) -> None: ...
