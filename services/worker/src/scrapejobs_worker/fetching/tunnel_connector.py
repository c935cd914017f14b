"""The connector of a job's proxy: every connection is a tunnel through the proxy to an address
the guard vetted, never to a name.

aiohttp's own proxy support hands the proxy the URL's host name (``CONNECT name:443``, or an
absolute ``GET http://name/``), and a proxy handed a name resolves it itself: a name that
resolves to a private address would be fetched by the proxy. Here the fetcher resolves and
vets the host as for a direct fetch (``pin_destination``); aiohttp asks ``PinnedResolver`` for
the host's addresses as always, and this connector, instead of opening a socket to an
address, asks the proxy for a tunnel to it (python-socks): ``CONNECT 203.0.113.7:443`` to an
HTTP(S) proxy, a SOCKS5 ``CONNECT`` of the address itself (ATYP 1 or 4, never a name). TLS to
the site then runs inside the tunnel with the host name (SNI and certificate checks), and the
request's Host header keeps the name: the proxy sees the address and the port, the TLS
handshake's server name and, for ``http://`` pages, the request itself.

A proxy that cannot be reached, or refuses the tunnel for its own reasons (authentication,
policy, a malformed answer), raises ``ProxyFailed``: the proxy's fault, not the site's (the
fetcher tries the next proxy). A proxy that answers that the site could not be reached
(``502``/``503``/``504``, SOCKS5's unreachable or refused) is the site's failure, as a refused
connection is.

This is the one place that overrides a private aiohttp method (``TCPConnector.
_wrap_create_connection``, as aiohttp-socks does): aiohttp is pinned by uv.lock, and
tests/unit/worker/test_tunnel_connector.py fails on a version whose method takes other
arguments."""

from __future__ import annotations

import asyncio
import ssl
from typing import Any

import aiohttp
from aiohttp.client_proto import ResponseHandler
from python_socks import ProxyError, ProxyTimeoutError, ProxyType
from python_socks.async_.asyncio.v2 import Proxy

from scrapejobs_shared.options.proxy_pools import ProxyServer
from scrapejobs_shared.ports.fetcher import TransientFetchError
from scrapejobs_worker.fetching.address_policy import AddressPolicy
from scrapejobs_worker.fetching.config import FetchPolicy
from scrapejobs_worker.fetching.pinned_connector import connector_settings, vetted_address

PROXY_TYPES = {"http": ProxyType.HTTP, "https": ProxyType.HTTP, "socks5": ProxyType.SOCKS5}
# a proxy's answer that the site, not the proxy, failed: HTTP CONNECT's bad gateway, service
# unavailable and gateway timeout; SOCKS5's network or host unreachable, connection refused,
# TTL expired
SITE_FAILED = frozenset({502, 503, 504, 3, 4, 5, 6})


class ProxyFailed(TransientFetchError):
    """The proxy could not be reached or would not open the tunnel (its fault, not the
    site's: the fetcher tries the next proxy). Names the proxy by its label, never its
    credentials. aiohttp lets it through its connection attempts untouched."""

    reason = "proxy_failed"
    host_fault = False

    def __init__(self, label: str, why: str) -> None:
        super().__init__(f"proxy {label}: {why}")
        self.label = label


class _ResponseHandler(ResponseHandler):
    """aiohttp's protocol, keeping the tunnel's stream writer referenced (Python 3.11.5+ closes
    a transport whose StreamWriter is collected; aiohttp-socks does the same)."""

    def __init__(self, loop: asyncio.AbstractEventLoop, writer: asyncio.StreamWriter) -> None:
        super().__init__(loop)
        self._writer = writer


def tunnel_connector(
    server: ProxyServer, policy: FetchPolicy, ssl_context: ssl.SSLContext
) -> TunnelConnector:
    """The pinned connector's settings, each connection a tunnel through ``server``."""
    return TunnelConnector(
        server, policy.address_policy(), **connector_settings(policy, ssl_context)
    )


class TunnelConnector(aiohttp.TCPConnector):
    """Each connection a tunnel through ``server`` to a vetted address."""

    def __init__(self, server: ProxyServer, policy: AddressPolicy, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self._server = server
        self._policy = policy
        # TLS to an https:// proxy itself (the site's TLS runs inside the tunnel)
        self._proxy_ssl = ssl.create_default_context() if server.scheme == "https" else None

    async def _wrap_create_connection(  # aiohttp's private method: see the module's note
        self,
        *args: Any,
        addr_infos: list[Any],
        req: Any,
        timeout: aiohttp.ClientTimeout,
        client_error: type[Exception] = aiohttp.ClientConnectorError,
        **kwargs: Any,
    ) -> tuple[asyncio.Transport, ResponseHandler]:
        """A tunnel to the first of ``addr_infos`` (aiohttp tries the next when this raises
        ``client_error``), TLS inside it to ``server_hostname``."""
        vetted = vetted_address(addr_infos[0][4], self._policy)
        server = self._server
        proxy = Proxy(
            proxy_type=PROXY_TYPES[server.scheme],
            host=server.host,
            port=server.port,
            username=server.username,
            password=server.password,
            rdns=False,
            proxy_ssl=self._proxy_ssl,
        )
        try:
            stream = await proxy.connect(
                dest_host=vetted.address.compressed,
                dest_port=vetted.port,
                timeout=timeout.sock_connect,
            )
        except ProxyError as exc:
            if exc.error_code in SITE_FAILED:
                refused = ConnectionRefusedError(f"through {server.label}: {exc}")
                raise client_error(req.connection_key, refused) from None
            raise ProxyFailed(server.label, f"refused the tunnel ({exc})") from None
        except ProxyTimeoutError:
            raise ProxyFailed(server.label, "no answer in time") from None
        except OSError as exc:  # python-socks' ProxyConnectionError among them
            raise ProxyFailed(server.label, f"unreachable ({exc.strerror or exc})") from None
        try:
            site_ssl = kwargs.get("ssl")
            if isinstance(site_ssl, ssl.SSLContext):
                await stream.writer.start_tls(
                    site_ssl, server_hostname=kwargs.get("server_hostname")
                )
        except ssl.SSLCertVerificationError as exc:
            await stream.close()
            raise aiohttp.ClientConnectorCertificateError(req.connection_key, exc) from exc
        except (ssl.SSLError, OSError) as exc:
            await stream.close()
            raise client_error(req.connection_key, exc) from exc
        transport = stream.writer.transport
        protocol = _ResponseHandler(self._loop, stream.writer)
        transport.set_protocol(protocol)
        protocol.connection_made(transport)
        return transport, protocol  # type: ignore[return-value]
