"""Sends the fetcher's requests: httpx's transport over a pool whose connections all go through
the pinned backend, without httpx's client layer.

``httpx.AsyncClient`` adds, per request, a cookie jar (which a fetcher shared by every job must
not keep: cookies set by one site would be replayed for an unrelated job), auth, redirect
following (the fetcher follows redirects itself, vetting each hop), event hooks, a timer
wrapper around the body stream and a log line. None of it is wanted here, and together it
cost a fifth of a fetch's CPU (bench/README.md, "The fetch path"). ``PinnedSender`` builds
the ``httpx.Request`` as the client would (the same default headers, ``Host``, timeouts) and
hands it to the transport (httpx's public transport API): exceptions, streaming and decoding
stay httpx's. The transport itself is in connection_pool.py, with the private names.
"""

from __future__ import annotations

import ssl

import httpcore
import httpx

from scrapejobs_worker.fetching.config import FetchPolicy
from scrapejobs_worker.fetching.connection_pool import PinnedTransport

# Only what content_encoding.py can decode with bounded memory.
ACCEPT_ENCODING = "gzip, deflate"


class PinnedSender:
    """One per fetcher: sends a request and returns its response with the body unread (the
    caller reads it, then must ``aclose()`` it). Keeps no cookies, follows no redirects."""

    def __init__(
        self,
        policy: FetchPolicy,
        network_backend: httpcore.AsyncNetworkBackend,
        ssl_context: ssl.SSLContext | None = None,
    ) -> None:
        limits = httpx.Limits(
            max_connections=policy.max_connections,
            max_keepalive_connections=policy.max_keepalive_connections,
            keepalive_expiry=policy.keepalive_expiry_s,
        )
        context = ssl_context or httpx.create_ssl_context(trust_env=False)
        self._transport = PinnedTransport(network_backend, limits, context)
        # httpx.AsyncClient's defaults, in its order, with our user agent and encodings
        self._headers = httpx.Headers(
            {
                "accept": "*/*",
                "accept-encoding": ACCEPT_ENCODING,
                "connection": "keep-alive",
                "user-agent": policy.user_agent,
            }
        )
        timeout = httpx.Timeout(
            connect=policy.connect_timeout_s,
            read=policy.read_timeout_s,
            write=policy.read_timeout_s,
            pool=policy.connect_timeout_s,
        )
        self._timeout = timeout.as_dict()

    async def send(
        self, method: str, url: httpx.URL, headers: dict[str, str], content: bytes | None = None
    ) -> httpx.Response:
        """The response, its body still to be read (``aiter_raw``) and then closed."""
        merged = self._headers.copy()
        merged.update(headers)
        extensions = {"timeout": self._timeout}
        request = httpx.Request(method, url, headers=merged, content=content, extensions=extensions)
        response = await self._transport.handle_async_request(request)
        response.request = request
        return response

    async def aclose(self) -> None:
        await self._transport.aclose()
