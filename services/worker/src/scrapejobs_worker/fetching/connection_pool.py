"""The fetcher's connection pool: httpcore's, with its bookkeeping pass made linear.

httpcore 1.0's ``AsyncConnectionPool._assign_requests_to_connections`` runs twice per request
(when it enters the pool and when it leaves) and, for every idle connection, counts the pool's
connections by building a list of them: quadratic in the number of pooled connections. A
worker keeps a connection per lane to each busy host, and measured over the benchmark's pages
this pass cost 9-14% of a page's CPU at 8-16 connections (encode/httpcore#1035 and the httpx
discussions it cites describe the same). The count it builds is simply the number of
connections, so this pass uses ``len(self._connections)``: the same decisions, in linear time.
Everything else is httpcore 1.0.9's code (BSD-3-Clause, Encode OSS Ltd.) unchanged;
``tests/unit/fetching/test_connection_pool.py`` pins that version so an upgrade re-checks it.
"""

from __future__ import annotations

import httpcore
from httpcore._async.interfaces import AsyncConnectionInterface

ADAPTED_FROM = "1.0.9"  # httpcore's version whose pass this is


class LinearConnectionPool(httpcore.AsyncConnectionPool):
    def _assign_requests_to_connections(self) -> list[AsyncConnectionInterface]:
        closing: list[AsyncConnectionInterface] = []

        # Drop closed connections; close expired ones, and idle ones beyond the keep-alive cap.
        for connection in list(self._connections):
            if connection.is_closed():
                self._connections.remove(connection)
            elif connection.has_expired() or (
                connection.is_idle() and len(self._connections) > self._max_keepalive_connections
            ):
                self._connections.remove(connection)
                closing.append(connection)

        # Assign queued requests: reuse a connection, open one, or replace an idle one.
        for pool_request in [request for request in self._requests if request.is_queued()]:
            origin = pool_request.request.url.origin
            available = [
                connection
                for connection in self._connections
                if connection.can_handle_request(origin) and connection.is_available()
            ]
            idle = [connection for connection in self._connections if connection.is_idle()]
            if available:
                pool_request.assign_to_connection(available[0])
            elif len(self._connections) < self._max_connections:
                connection = self.create_connection(origin)
                self._connections.append(connection)
                pool_request.assign_to_connection(connection)
            elif idle:
                self._connections.remove(idle[0])
                closing.append(idle[0])
                connection = self.create_connection(origin)
                self._connections.append(connection)
                pool_request.assign_to_connection(connection)
        return closing
