"""Sends the fetcher's requests: aiohttp's client (its HTTP parser is C) over the pinned
connector, one request at a time, without aiohttp's redirects, cookies, proxies or decoding.

Why aiohttp and not httpx here: a keep-alive GET of a catalog page costs about a quarter of
the CPU in aiohttp that it costs in httpx's transport (h11 parses in Python), and the fetch was
the largest part of the worker's CPU (bench/README.md, "The fetch on aiohttp"). What the
fetcher needs of a client is small and public in aiohttp: a resolver and a socket factory
(pinned_connector.py), ``allow_redirects=False``, ``auto_decompress=False`` (bodies are
decoded by content_encoding.py with bounded memory), a cookie jar that keeps nothing, no
environment proxies (``trust_env=False``).
"""

from __future__ import annotations

import asyncio
import ssl
from collections.abc import AsyncIterator
from typing import Any

import aiohttp
import httpx
from aiohttp.connector import Connection
from multidict import CIMultiDict
from yarl import URL

from scrapejobs_shared.options.proxy_pools import ProxyServer
from scrapejobs_worker.fetching.config import FetchPolicy
from scrapejobs_worker.fetching.pinned_connector import pinned_connector
from scrapejobs_worker.fetching.tunnel_connector import tunnel_connector

# Only what content_encoding.py can decode with bounded memory.
ACCEPT_ENCODING = "gzip, deflate"
# A response's head, bounded (aiohttp's defaults, 8 KiB a line and 128 lines, refuse what real
# sites send: long Content-Security-Policy and Set-Cookie lines): at most 6.25 MiB in all.
MAX_HEADER_LINE = 32 * 1024
MAX_HEADERS = 200
# a body goes with the Content-Type its caller gives, or none (aiohttp would add its own)
AS_GIVEN = ("Content-Type",)


class PeerResponse(aiohttp.ClientResponse):
    """aiohttp's response (``ClientSession(response_class=...)``), which also keeps the
    address of the peer it was read from: aiohttp gives a connection back to its pool as soon
    as a small body has arrived, often before the caller sees the response."""

    peer: Any = None

    async def start(self, connection: Connection) -> aiohttp.ClientResponse:
        transport = connection.transport
        self.peer = transport.get_extra_info("peername") if transport is not None else None
        return await super().start(connection)


class SentResponse:
    """A response whose body is still to be read (``raw_chunks``); ``aclose()`` must follow
    (it gives the connection back to the pool when the body was read whole, else drops it)."""

    def __init__(self, response: aiohttp.ClientResponse) -> None:
        self._response = response
        self.status = response.status
        self.peer: Any = getattr(response, "peer", None)

    def header(self, name: str) -> str | None:
        return self._response.headers.get(name)

    def headers(self) -> dict[str, str]:
        """Lower-cased names; repeated headers joined with ", "."""
        flat: dict[str, str] = {}
        for raw_name, raw_value in self._response.raw_headers:
            key = _text(raw_name).lower()
            value = _text(raw_value)
            flat[key] = f"{flat[key]}, {value}" if key in flat else value
        return flat

    async def raw_chunks(self) -> AsyncIterator[bytes]:
        """The body as it came off the wire (no Content-Encoding decoded), a read at a time."""
        content = self._response.content
        while True:
            chunk = await content.readany()
            if not chunk:
                return
            yield chunk

    async def aclose(self) -> None:
        self._response.release()


def _text(raw: bytes) -> str:
    """A header's bytes as httpx read them: UTF-8 where they are, else Latin-1."""
    try:
        return raw.decode("utf-8")
    except UnicodeDecodeError:
        return raw.decode("latin-1")


class PinnedSender:
    """One per fetcher: sends a request and returns its response with the body unread. Keeps
    no cookies, follows no redirects. The session is made on the first request (aiohttp's
    needs a running event loop; the composition root builds the fetcher without one)."""

    def __init__(
        self, policy: FetchPolicy, ssl_context: ssl.SSLContext, via: ProxyServer | None = None
    ) -> None:
        """``via``: every connection a tunnel through this proxy (tunnel_connector.py)."""
        self._policy = policy
        self._ssl_context = ssl_context
        self._via = via
        self._session: aiohttp.ClientSession | None = None
        # the headers httpx.AsyncClient sends (as the fetcher did on httpx), our user agent
        self._headers = CIMultiDict(
            {
                "Accept": "*/*",
                "Accept-Encoding": ACCEPT_ENCODING,
                "Connection": "keep-alive",
                "User-Agent": policy.user_agent,
            }
        )
        self._timeout = aiohttp.ClientTimeout(
            total=None,
            connect=policy.connect_timeout_s,
            sock_connect=policy.connect_timeout_s,
            sock_read=policy.read_timeout_s,
        )

    def _session_now(self) -> aiohttp.ClientSession:
        if self._session is None:
            connector = (
                pinned_connector(self._policy, self._ssl_context)
                if self._via is None
                else tunnel_connector(self._via, self._policy, self._ssl_context)
            )
            self._session = aiohttp.ClientSession(
                connector=connector,
                cookie_jar=aiohttp.DummyCookieJar(),
                auto_decompress=False,
                trust_env=False,
                timeout=self._timeout,
                raise_for_status=False,
                response_class=PeerResponse,
                max_line_size=MAX_HEADER_LINE,
                max_field_size=MAX_HEADER_LINE,
                max_headers=MAX_HEADERS,
            )
        return self._session

    async def send(
        self, method: str, url: httpx.URL, headers: dict[str, str], content: bytes | None = None
    ) -> SentResponse:
        merged = self._headers.copy()
        merged.update(headers)
        response = await self._session_now().request(
            method,
            URL(str(url), encoded=True),
            headers=merged,
            data=content,
            allow_redirects=False,
            skip_auto_headers=AS_GIVEN,
        )
        return SentResponse(response)

    async def aclose(self) -> None:
        if self._session is not None:
            await self._session.close()
            self._session = None
            await asyncio.sleep(0)  # let the transports close (aiohttp's advice)
