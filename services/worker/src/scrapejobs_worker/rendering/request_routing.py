"""Every request a rendered page makes, answered by the worker's safe fetcher: the browser
itself connects nowhere.

The page's own document is answered from the fetch already made (it is not fetched twice).
A request of a blocked resource type, of another scheme or method, or past the page's byte
budget is aborted; one whose destination the fetcher refuses is aborted too, and when it is a
navigation of the top frame the render ends ``blocked_destination``. Subresources are fetched
inside the page's host slot (they take no slot of their own and are not checked against
robots.txt, as a browser's are not), at most ``PAGE_FETCHES`` at once, and a page makes at
most ``REQUESTS_PER_HOST`` requests to any one host and ``REQUESTS_PER_PAGE`` in all (a page's
script looping on a third-party host's URL sent ~900 in 5 s): past them its requests are
aborted, and the page renders without them.

The job's headers (its ``Authorization``, cookies, API keys) go only with requests to the job's
own origin (the URL the job asked for: scheme, host and port); a request to any other origin
(a script's CDN, an ad, an iframe, an XHR or a form the page builds) carries only what
describes the client (:data:`~scrapejobs_worker.fetching.redirects.KEPT_ACROSS_ORIGINS`), as a
plain fetch's cross-origin redirect does."""

from __future__ import annotations

import asyncio
import contextlib
import logging
import time
from collections import Counter
from collections.abc import Mapping
from urllib.parse import urlsplit

from playwright.async_api import Error as PlaywrightError
from playwright.async_api import Frame, Request, Route, WebSocketRoute

from scrapejobs_shared.ports.fetcher import (
    DIRECT,
    BlockedDestination,
    Fetcher,
    FetchError,
    FetchRequest,
    FetchResponse,
)
from scrapejobs_worker.fetching.redirects import KEPT_ACROSS_ORIGINS

log = logging.getLogger(__name__)

PAGE_FETCHES = 6  # a browser's own connections per host
REQUESTS_PER_HOST = 100  # of one rendered page, to one host
REQUESTS_PER_PAGE = 500  # of one rendered page, in all
PASSED_REQUEST_HEADERS = ("accept", "accept-language", "referer", "content-type")
# the body is handed over decoded and whole; the browser must not decode or frame it again
DROPPED_RESPONSE_HEADERS = frozenset(
    {"content-encoding", "content-length", "transfer-encoding", "connection", "keep-alive"}
)
ROUTED_METHODS = frozenset({"GET", "HEAD", "POST"})
# failures the render chose (a bound, the destination policy) or the page did (a cancelled load)
CHOSEN_FAILURES = frozenset({"net::ERR_BLOCKED_BY_CLIENT", "net::ERR_ABORTED"})
KEPT_FAILURES = 10


class PageRouting:
    def __init__(
        self,
        fetcher: Fetcher,
        document: FetchResponse,
        headers: Mapping[str, str],
        blocked_types: frozenset[str],
        max_bytes: int,
        deadline: float,
        job: FetchRequest | None = None,
    ) -> None:
        """``job``: the page's own fetch: its site (whose origin alone gets the job's headers),
        its certificate checks and its proxy, which every request of the page keeps."""
        self._fetcher = fetcher
        self._document: FetchResponse | None = document
        self._headers = dict(headers)
        # the job's own origin: its headers go there only (the document's, unless given)
        self._origin = origin_of(document.url if job is None else job.url)
        self._client_headers = {
            name: value for name, value in headers.items() if name.lower() in KEPT_ACROSS_ORIGINS
        }
        self._blocked_types = blocked_types
        self._bytes_left = max_bytes - len(document.body)
        self._deadline = deadline  # time.monotonic() by which the render must end
        self._fetches = asyncio.Semaphore(PAGE_FETCHES)
        self._per_host: Counter[str] = Counter()
        self.main_frame: Frame | None = None  # the rendered page's top frame, once it exists
        self.blocked: BlockedDestination | None = None  # a refused top-level navigation
        self._route = DIRECT if job is None else job.route
        self.tls_unverified = False  # one of them passed with a certificate that failed
        # requests of the page that failed, not by the page's bounds or the destination policy
        # (those are aborted ``blockedbyclient``) nor by the page itself (``ERR_ABORTED``)
        self.failures: list[tuple[str, str]] = []

    async def handle(self, route: Route) -> None:
        request = route.request
        try:
            await self._answer(route, request)
        except PlaywrightError:  # the page or its browser went away meanwhile
            pass
        except Exception:  # never leave the browser waiting on a request
            log.exception("routing a rendered page's request failed")
            with contextlib.suppress(PlaywrightError):
                await route.abort("failed")

    async def _answer(self, route: Route, request: Request) -> None:
        document = self._document
        if document is not None and request.url == document.url and self._top(request):
            self._document = None  # answered once; a reload is fetched like anything else
            await route.fulfill(
                status=document.status, headers=_passed(document.headers), body=document.body
            )
            return
        if (
            request.resource_type in self._blocked_types
            or request.method not in ROUTED_METHODS
            or not request.url.startswith(("http://", "https://"))
            or self._bytes_left <= 0
            or not self._counted(request.url)
        ):
            await route.abort("blockedbyclient")
            return
        try:
            response = await self._fetch(request)
        except BlockedDestination as exc:
            if self._top(request):
                self.blocked = exc
            await route.abort("blockedbyclient")
            return
        except FetchError:
            await route.abort("failed")
            return
        self._bytes_left -= len(response.body)
        if self._bytes_left < 0:
            await route.abort("blockedbyclient")
            return
        await route.fulfill(
            status=response.status, headers=_passed(response.headers), body=response.body
        )

    def failed(self, request: Request) -> None:
        """The page's ``requestfailed`` listener: a failure the render did not choose."""
        error = request.failure or ""
        # an abort of ours reads ``net::ERR_BLOCKED_BY_CLIENT.Inspector``
        if error.split(".", 1)[0] not in CHOSEN_FAILURES and len(self.failures) < KEPT_FAILURES:
            self.failures.append((request.url, error))

    def _counted(self, url: str) -> bool:
        """Count a request of the page to ``url``'s host, unless it is past the page's
        bounds (then it is not sent)."""
        host = (urlsplit(url).hostname or "").rstrip(".")
        if self._per_host[host] >= REQUESTS_PER_HOST or self._per_host.total() >= REQUESTS_PER_PAGE:
            return False
        self._per_host[host] += 1
        return True

    def _top(self, request: Request) -> bool:
        """A navigation of the rendered page's top frame (not of an iframe or a popup)."""
        try:
            return request.is_navigation_request() and request.frame is self.main_frame
        except PlaywrightError:  # a service worker's request has no frame
            return False

    async def _fetch(self, request: Request) -> FetchResponse:
        own = origin_of(request.url) == self._origin
        headers = dict(self._headers if own else self._client_headers)
        for name in PASSED_REQUEST_HEADERS:
            if (value := request.headers.get(name)) is not None:
                headers.setdefault(name, value)
        body = (request.post_data_buffer or b"") if request.method == "POST" else None
        async with self._fetches:
            timeout = self._deadline - time.monotonic()
            if timeout <= 0:
                raise FetchError("the render's time is up")
            fetch = FetchRequest(
                request.url,
                headers,
                timeout,
                body=body,
                route=self._route,
            )
            response = await self._fetcher.fetch(fetch)
            self.tls_unverified = self.tls_unverified or response.tls_unverified
            return response


async def refuse_socket(socket: WebSocketRoute) -> None:
    """WebSockets are not routed through the fetcher: every one is closed at once."""
    with contextlib.suppress(PlaywrightError):
        await socket.close(code=1008, reason="WebSockets are not allowed while rendering")


_DEFAULT_PORTS = {"http": 80, "https": 443}


def origin_of(url: str) -> str:
    """A URL's origin, ``scheme://host:port`` with the scheme's default port made explicit
    (``""`` for a URL without a host)."""
    try:
        parts = urlsplit(url)
        port = parts.port or _DEFAULT_PORTS.get(parts.scheme.lower())
    except ValueError:
        return ""
    host = (parts.hostname or "").rstrip(".")
    return f"{parts.scheme.lower()}://{host}:{port}" if host else ""


def _passed(headers: Mapping[str, str]) -> dict[str, str]:
    return {k: v for k, v in headers.items() if k.lower() not in DROPPED_RESPONSE_HEADERS}
