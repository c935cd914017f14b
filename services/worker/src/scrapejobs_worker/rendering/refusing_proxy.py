"""A proxy address that refuses every connection: where the browser is pointed, so that any
request that escapes routing (a WebSocket, a WebRTC relay, the browser's own background
traffic) fails closed instead of reaching the network.

A loopback socket is bound to a free port and never listens: the kernel answers every
connection to it with a reset, and no other process can take the port while it is held."""

from __future__ import annotations

import socket


class RefusingProxy:
    def __init__(self) -> None:
        self._socket = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        self._socket.bind(("127.0.0.1", 0))  # bound, never listening: connections are refused
        self.port: int = self._socket.getsockname()[1]

    @property
    def server(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    def close(self) -> None:
        self._socket.close()
