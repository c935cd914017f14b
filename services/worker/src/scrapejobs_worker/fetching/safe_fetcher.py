"""SafeFetcher: the SSRF-safe ``Fetcher`` adapter over aiohttp's client.

Per fetch: the URL and headers are vetted; then, for each hop (the first request and every
redirect, at most ``max_redirects`` of them), the host is resolved once and every address is
checked (``resolver``), the vetted addresses are pinned for the connection
(``pinned_connector``), the request is sent through aiohttp (``client.PinnedSender``: no env
proxies, no automatic redirects, no cookie jar, no decoding), and the peer address of the
response is re-checked. URLs are parsed and vetted with httpx's URL type
(``request_validation``). The body is streamed under the size caps described in
``body_reader`` (oversized => truncated response; decompression bomb => PermanentFetchError
``body_too_large``). The whole fetch, redirects included, runs under one ``asyncio.timeout`` of
``FetchRequest.timeout_s`` (clamped to ``max_deadline_s``).

HTTP error statuses are responses, not errors. No cookies are kept between fetches.

``FetchRequest.proxy``: each hop goes through a proxy serving it (``proxy_routes``), as a
tunnel to the vetted address (``tunnel_connector``); a proxy that cannot be reached or refuses
the tunnel is benched and the next one tried; none left: ``ProxyUnavailable`` (never direct
instead). The peer of a proxied response is the proxy: the tunnel's address was checked instead.

``FetchRequest.verify_tls`` off (Firecrawl's ``skipTlsVerification``): each hop is still sent
with the certificate checked; only a hop whose certificate fails verification is sent again
without the check (its own pool), and the response says so (``tls_unverified``). Every address
check applies to both.

The constructor does no I/O and needs no running event loop (the connection pool is made on
the first fetch); ``aclose()`` must be awaited once the fetcher is no longer needed.
"""

from __future__ import annotations

import asyncio
import logging
import math
import ssl
import time
from dataclasses import dataclass, replace
from types import TracebackType

import aiohttp
import httpx

from scrapejobs_shared.domain.workers import ProxyUse
from scrapejobs_shared.options.proxy_pools import ProxyServer
from scrapejobs_shared.ports.fetcher import (
    BlockedDestination,
    FetchError,
    FetchRequest,
    FetchResponse,
    FetchRoute,
    PermanentFetchError,
    ProxyUnavailable,
)
from scrapejobs_shared.ports.tenant_proxies import TenantProxies
from scrapejobs_shared.tenant_pools import ProxyPools
from scrapejobs_worker.fetching.body_reader import Body, BodyLimits, read_capped_body
from scrapejobs_worker.fetching.client import PinnedSender, SentResponse
from scrapejobs_worker.fetching.config import FetchPolicy
from scrapejobs_worker.fetching.errors import (
    certificate_refused,
    deadline_exceeded,
    translate_transport_error,
)
from scrapejobs_worker.fetching.pinned_connector import pin_destination, verify_peer
from scrapejobs_worker.fetching.proxy_routes import ProxyCounts, ProxyRoutes
from scrapejobs_worker.fetching.redirects import headers_for_hop, redirect_target
from scrapejobs_worker.fetching.request_validation import (
    effective_port,
    parse_target_url,
    validate_headers,
)
from scrapejobs_worker.fetching.resolver import Resolver
from scrapejobs_worker.fetching.tunnel_connector import ProxyFailed

logger = logging.getLogger(__name__)


@dataclass(frozen=True, slots=True)
class _FinalResponse:
    url: httpx.URL
    status: int
    headers: dict[str, str]
    body: Body
    tls_unverified: bool = False  # a hop's certificate failed verification
    proxy: ProxyServer | None = None  # the proxy it came through


class SafeFetcher:
    """Implements the ``Fetcher`` port. Safe for concurrent ``fetch`` calls from many tasks."""

    def __init__(
        self,
        policy: FetchPolicy | None = None,
        *,
        resolver: Resolver | None = None,
        ssl_context: ssl.SSLContext | None = None,
        tenant_proxies: TenantProxies | None = None,
    ) -> None:
        """``resolver`` and ``ssl_context`` default to the production ones; they exist for
        tests. ``tenant_proxies``: the tenants' own pools (SCRAPEJOBS_TENANT_PROXIES)."""
        self._policy = policy or FetchPolicy()
        self._address_policy = self._policy.address_policy()
        self._resolver = resolver or Resolver(self._address_policy)
        self._ssl_context = ssl_context or verified_context()
        self._direct = self._senders_for(None)
        # by the proxy itself, credentials and all: two tenants' pools may name one proxy
        self._via: dict[ProxyServer, tuple[PinnedSender, PinnedSender]] = {}
        pools = ProxyPools(self._policy.proxies, tenant_proxies)
        self._routes = ProxyRoutes(pools, self._policy.proxy_bench_s)
        self._limits = BodyLimits(
            max_body_bytes=self._policy.max_body_bytes,
            max_decoded_bytes=self._policy.max_decoded_bytes,
            max_compression_ratio=self._policy.max_compression_ratio,
        )

    async def __aenter__(self) -> SafeFetcher:
        return self

    async def __aexit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        traceback: TracebackType | None,
    ) -> None:
        await self.aclose()

    def _senders_for(self, via: ProxyServer | None) -> tuple[PinnedSender, PinnedSender]:
        """The senders of a route (verified, then unverified certificates)."""
        return (
            PinnedSender(self._policy, self._ssl_context, via),
            PinnedSender(self._policy, unverified_context(), via),
        )

    def proxy_counts(self) -> dict[str, ProxyCounts]:
        """Hops served and failures of each proxy, by label."""
        return self._routes.counts

    def proxy_use(self) -> tuple[ProxyUse, ...]:
        """The proxies this fetcher went through, for the worker's reports."""
        counts = self._routes.counts.items()
        return tuple(ProxyUse(k, c.served, c.failed) for k, c in counts if c.served or c.failed)

    async def aclose(self) -> None:
        for sender in (*self._direct, *(s for pair in self._via.values() for s in pair)):
            await sender.aclose()

    async def fetch(self, request: FetchRequest) -> FetchResponse:
        started = time.perf_counter()
        try:
            return await self._fetch(request, started)
        except FetchError as exc:
            level = logging.WARNING if isinstance(exc, BlockedDestination) else logging.INFO
            logger.log(level, "fetch of %s failed (%s): %s", request.url, exc.reason, exc.detail)
            raise

    async def _fetch(self, request: FetchRequest, started: float) -> FetchResponse:
        url = parse_target_url(request.url)
        headers = validate_headers(request.headers)
        deadline_s = self._deadline_s(request.timeout_s)
        try:
            async with asyncio.timeout(deadline_s):
                # the deployment's switch, not only the task's word (work published before
                # the switch was turned off is verified all the same)
                route = request.route
                if not self._policy.allow_unverified_tls:
                    route = replace(route, verify_tls=True)
                final, redirects = await self._follow_redirects(url, headers, request.body, route)
        except aiohttp.ClientError as exc:
            raise translate_transport_error(exc) from exc
        except TimeoutError as exc:
            raise deadline_exceeded(deadline_s) from exc
        return FetchResponse(
            url=str(final.url),
            status=final.status,
            headers=final.headers,
            body=final.body.data,
            elapsed_ms=round((time.perf_counter() - started) * 1000),
            truncated=final.body.truncated,
            redirects=redirects,
            tls_unverified=final.tls_unverified,
            proxy=None if final.proxy is None else final.proxy.label,
            proxy_tier=None if final.proxy is None else final.proxy.tier,
        )

    def _deadline_s(self, timeout_s: float) -> float:
        if not math.isfinite(timeout_s) or timeout_s <= 0:
            raise PermanentFetchError(f"invalid timeout {timeout_s!r}", reason="invalid_request")
        return min(timeout_s, self._policy.max_deadline_s)

    async def _follow_redirects(
        self, url: httpx.URL, headers: dict[str, str], body: bytes | None, route: FetchRoute
    ) -> tuple[_FinalResponse, tuple[str, ...]]:
        """Returns the final response and the URLs that redirected, in order (a POST's
        response is final whatever its status)."""
        redirected_from: list[str] = []
        unverified = False
        while True:
            outcome, hop_unverified = await self._one_hop(url, headers, body, route)
            unverified = unverified or hop_unverified
            if isinstance(outcome, _FinalResponse):
                return replace(outcome, tls_unverified=unverified), tuple(redirected_from)
            redirected_from.append(str(url))
            if len(redirected_from) > self._policy.max_redirects:
                raise PermanentFetchError(
                    f"more than {self._policy.max_redirects} redirects",
                    reason="too_many_redirects",
                )
            headers = headers_for_hop(headers, url, outcome)
            url = outcome

    async def _one_hop(
        self, url: httpx.URL, headers: dict[str, str], body: bytes | None, route: FetchRoute
    ) -> tuple[_FinalResponse | httpx.URL, bool]:
        """Resolve, vet and pin the host, send one GET (or a POST of ``body``); a GET's
        redirect yields the next URL. The flag: the hop's certificate failed verification
        and ``route.verify_tls`` let it pass."""
        host = url.raw_host.decode("ascii")
        destination = await self._resolver.resolve(host, effective_port(url))
        method = "GET" if body is None else "POST"
        sent = _Sent(method, url, headers, body)
        with pin_destination(destination):
            response, unverified, via = await self._send(sent, route)
        try:
            if via is None:  # through a proxy, the peer is the proxy (the tunnel was vetted)
                verify_peer(response.peer, self._address_policy)
            if body is None:
                target = redirect_target(response.status, response.header("location"), url)
                if target is not None:
                    logger.debug("redirect %s -> %s", url, target)
                    return target, unverified
            encoding = response.header("content-encoding") or ""
            read = await read_capped_body(response.raw_chunks(), encoding, self._limits)
            final = _FinalResponse(url, response.status, response.headers(), read, proxy=via)
            return final, unverified
        finally:
            await response.aclose()

    async def _send(
        self, sent: _Sent, route: FetchRoute
    ) -> tuple[SentResponse, bool, ProxyServer | None]:
        """The response, whether its certificate went unverified, and the proxy it came
        through (None: direct)."""
        sticky = None
        if self._policy.proxy_sticky and route.session is not None:
            sticky = f"{route.session} {sent.url.host}"
        servers = await self._routes.candidates(route, sticky)
        if servers is None:
            return *await self._send_on(self._direct, sent, route.verify_tls), None
        failures: list[str] = []
        for server in servers:
            senders = self._via.get(server) or self._via.setdefault(
                server, self._senders_for(server)
            )
            try:
                response, unverified = await self._send_on(senders, sent, route.verify_tls)
            except ProxyFailed as exc:
                logger.warning("%s", exc)
                self._routes.failed(server)
                failures.append(str(exc))
                continue
            self._routes.served(server)
            return response, unverified, server
        detail = "; ".join(failures) or f"no proxy serves {route.proxy} here"
        raise ProxyUnavailable(detail)

    async def _send_on(
        self, senders: tuple[PinnedSender, PinnedSender], sent: _Sent, verify_tls: bool
    ) -> tuple[SentResponse, bool]:
        verified, unverified = senders
        try:
            return await verified.send(sent.method, sent.url, sent.headers, sent.body), False
        except aiohttp.ClientConnectorError as exc:
            if verify_tls or not certificate_refused(exc):
                raise
            logger.info("certificate of %s not verified: %s", sent.url.host, exc)
        return await unverified.send(sent.method, sent.url, sent.headers, sent.body), True


@dataclass(frozen=True, slots=True)
class _Sent:
    method: str
    url: httpx.URL
    headers: dict[str, str]
    body: bytes | None


def verified_context() -> ssl.SSLContext:
    """The TLS context of every hop: certifi's roots (as httpx verifies), host names checked,
    no SSLKEYLOGFILE and no certificate store from the environment."""
    return httpx.create_ssl_context(trust_env=False)


def unverified_context() -> ssl.SSLContext:
    """The TLS context of hops whose certificate failed and may (``verify_tls`` off): no
    certificate or host name check, the same protocols and ciphers otherwise."""
    return httpx.create_ssl_context(verify=False, trust_env=False)


def build_fetcher(
    policy: FetchPolicy | None = None, tenant_proxies: TenantProxies | None = None
) -> SafeFetcher:
    """The composition root's entry point: a production fetcher for ``policy`` (and the
    tenants' own proxy pools, where they may have some)."""
    return SafeFetcher(policy or FetchPolicy(), tenant_proxies=tenant_proxies)
