"""The fetcher's connection pool, and the httpx transport over it: the one module that uses
httpx's and httpcore's private names. What it relies on (both pinned below their next minor
release in services/worker/pyproject.toml; tests/unit/fetching/test_library_internals.py
fails on an upgrade):

* httpcore 1.0's ``AsyncConnectionPool``: the pass ``_assign_requests_to_connections`` it
  replaces, the attributes that pass reads (``_requests``, ``_connections``,
  ``_max_connections``, ``_max_keepalive_connections``) and ``AsyncConnectionInterface`` from
  ``httpcore._async.interfaces``;
* httpx 0.28's ``AsyncHTTPTransport._pool``: the pool its ``handle_async_request`` sends
  through, replaced by one on the fetcher's pinned network backend (httpx takes no backend
  of its own: this is what keeps every connection on the SSRF-checked addresses, whatever
  the pool's speed).

Why the pool's pass is replaced: it gives each idle connection to one request, and its cost
does not grow with the number of idle connections. ``make bench``'s ``worker-path c=16,
httpcore's pool`` row measures what it earns (bench/README.md, "The fetch path").

httpcore 1.0's ``AsyncConnectionPool._assign_requests_to_connections`` runs when a request
enters the pool and when one leaves. A page cost more CPU at 12-16 connections than at 8
(bench/README.md, "The fetch path"), for three reasons:

* **One idle connection, many requests.** A connection given to a request stays ``IDLE`` until
  that request starts on it, after an await; a pass running meanwhile gives the same connection
  to the next queued request too. All but one then fail with ``ConnectionNotAvailable`` and go
  round again (another pass, another lock), herding onto the next idle connection: at 16
  connections, ~9 extra rounds per request (encode/httpcore#822; #1110 is the same race
  closing such a connection as surplus).
* **A socket poll per idle connection per pass.** ``has_expired()`` of an idle connection polls
  its socket (has the server closed it?), and the pass asked it of every connection.
* **A list built per idle connection** to count the pool's connections (encode/httpcore#1035).

This pass makes the same promises without them:

* A connection given to a request that has not started on it yet is ``taken``: it is not
  given to another request, nor closed as a surplus idle connection.
* A request is never given an expired connection: the connection it would be given is checked
  (``has_expired()``, socket poll included) first; an expired one is closed and the next tried.
* Closed connections leave the pool, and idle ones beyond the keep-alive cap are closed, on
  every pass (state checks, the count is ``len``).
* Every connection's ``has_expired()`` is asked at least every ``SWEEP_INTERVAL_S`` (on the
  first pass after that; httpcore asks on every pass), so idle connections past their
  keep-alive or closed by the server are closed that much later at most. A busy connection's
  check polls nothing: it is asked on every pass.

Everything else is httpcore 1.0.9's code (BSD-3-Clause, Encode OSS Ltd.) unchanged;
``tests/unit/fetching/test_connection_pool_version.py`` pins that version so an upgrade
re-checks it.
"""

from __future__ import annotations

import ssl
import time

import httpcore
import httpx
from httpcore._async.interfaces import AsyncConnectionInterface

ADAPTED_FROM = "1.0.9"  # httpcore's version whose pass this is
SWEEP_INTERVAL_S = 0.5  # every idle connection's expiry is checked at least this often


class LinearConnectionPool(httpcore.AsyncConnectionPool):
    _next_sweep = 0.0  # monotonic time of the next pass that checks every idle connection

    def _assign_requests_to_connections(self) -> list[AsyncConnectionInterface]:
        closing: list[AsyncConnectionInterface] = []
        now = time.monotonic()
        sweep = now >= self._next_sweep
        if sweep:
            self._next_sweep = now + SWEEP_INTERVAL_S

        # Connections given to a request that has not started on them yet look idle: they are
        # neither given to another request nor closed as surplus.
        taken = {id(request.connection) for request in self._requests if not request.is_queued()}

        # Drop closed connections; close expired ones, and idle ones beyond the keep-alive cap.
        for connection in list(self._connections):
            if connection.is_closed():
                self._connections.remove(connection)
                continue
            idle = connection.is_idle() and id(connection) not in taken
            if ((sweep or not idle) and connection.has_expired()) or (
                idle and len(self._connections) > self._max_keepalive_connections
            ):
                self._connections.remove(connection)
                closing.append(connection)

        # Assign queued requests: reuse a connection, open one, or replace an idle one.
        for pool_request in [request for request in self._requests if request.is_queued()]:
            origin = pool_request.request.url.origin
            available = self._first_available(origin, taken, closing)
            if available is not None:
                taken.add(id(available))
                pool_request.assign_to_connection(available)
            elif len(self._connections) < self._max_connections:
                connection = self.create_connection(origin)
                self._connections.append(connection)
                taken.add(id(connection))
                pool_request.assign_to_connection(connection)
            elif spare := [c for c in self._connections if c.is_idle() and id(c) not in taken]:
                self._connections.remove(spare[0])
                closing.append(spare[0])
                connection = self.create_connection(origin)
                self._connections.append(connection)
                taken.add(id(connection))
                pool_request.assign_to_connection(connection)
        return closing

    def _first_available(
        self, origin: httpcore.Origin, taken: set[int], closing: list[AsyncConnectionInterface]
    ) -> AsyncConnectionInterface | None:
        """The first pooled connection that can take a request to ``origin`` now and is not
        ``taken`` (given to a request that has not started on it yet); expired ones met on
        the way are taken out of the pool and added to ``closing``."""
        for connection in list(self._connections):
            if id(connection) in taken:
                continue
            if not (connection.can_handle_request(origin) and connection.is_available()):
                continue
            if connection.has_expired():
                self._connections.remove(connection)
                closing.append(connection)
                continue
            return connection
        return None


class PinnedTransport(httpx.AsyncHTTPTransport):
    """httpx's own transport (exception mapping, streaming), over a pool with our backend
    (``LinearConnectionPool``: httpcore's, with a cheaper bookkeeping pass)."""

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
