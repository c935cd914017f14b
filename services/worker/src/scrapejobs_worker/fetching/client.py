"""Builds the pooled httpx client whose connections all go through the pinned backend."""

from __future__ import annotations

import ssl

import httpcore
import httpx

from scrapejobs_worker.fetching.config import FetchPolicy
from scrapejobs_worker.fetching.connection_pool import LinearConnectionPool

# Only what decoding.py can decode with bounded memory.
ACCEPT_ENCODING = "gzip, deflate"


class PinnedTransport(httpx.AsyncHTTPTransport):
    """httpx's own transport (exception mapping, streaming), over a pool with our backend
    (``LinearConnectionPool``: httpcore's, with a linear bookkeeping pass)."""

    def __init__(
        self,
        network_backend: httpcore.AsyncNetworkBackend,
        limits: httpx.Limits,
        ssl_context: ssl.SSLContext,
    ) -> None:
        super().__init__(verify=ssl_context, trust_env=False, limits=limits, proxy=None)
        self._pool = LinearConnectionPool(
            ssl_context=ssl_context,
            max_connections=limits.max_connections,
            max_keepalive_connections=limits.max_keepalive_connections,
            keepalive_expiry=limits.keepalive_expiry,
            http1=True,
            http2=False,
            network_backend=network_backend,
        )


def build_client(
    policy: FetchPolicy,
    network_backend: httpcore.AsyncNetworkBackend,
    ssl_context: ssl.SSLContext | None = None,
) -> httpx.AsyncClient:
    """One client per fetcher: no env proxies, no automatic redirects, our own encodings."""
    limits = httpx.Limits(
        max_connections=policy.max_connections,
        max_keepalive_connections=policy.max_keepalive_connections,
        keepalive_expiry=policy.keepalive_expiry_s,
    )
    context = ssl_context or httpx.create_ssl_context(trust_env=False)
    return httpx.AsyncClient(
        transport=PinnedTransport(network_backend, limits, context),
        trust_env=False,
        follow_redirects=False,
        headers={"user-agent": policy.user_agent, "accept-encoding": ACCEPT_ENCODING},
        timeout=httpx.Timeout(
            connect=policy.connect_timeout_s,
            read=policy.read_timeout_s,
            write=policy.read_timeout_s,
            pool=policy.connect_timeout_s,
        ),
    )
