"""ConnectedStream: the socket facts of a connection are read once, readability every time."""

from __future__ import annotations

import socket
from typing import Any

import httpcore

from scrapejobs_worker.fetching.connected_stream import ConnectedStream, is_readable


class CountingStream(httpcore.AsyncNetworkStream):
    """Answers like AnyIO's stream, counting how often each fact is asked."""

    def __init__(self, raw: socket.socket) -> None:
        self.raw = raw
        self.asked: dict[str, int] = {}
        self.tls_started = False

    def get_extra_info(self, info: str) -> Any:
        self.asked[info] = self.asked.get(info, 0) + 1
        return {
            "server_addr": self.raw.getpeername(),
            "client_addr": self.raw.getsockname(),
            "socket": self.raw,
            "ssl_object": "the ssl object" if self.tls_started else None,
        }.get(info)

    async def start_tls(self, ssl_context, server_hostname=None, timeout=None):  # type: ignore[no-untyped-def]
        self.tls_started = True
        return self


async def test_addresses_are_read_once_and_readability_asked_of_the_socket() -> None:
    ours, theirs = socket.socketpair(socket.AF_UNIX)
    with ours, theirs:
        inner = CountingStream(ours)
        stream = ConnectedStream.of(inner)
        for _ in range(5):
            assert stream.get_extra_info("socket") is ours
            assert stream.get_extra_info("is_readable") is False
        assert inner.asked == {"server_addr": 1, "client_addr": 1, "socket": 1}
        theirs.send(b"x")
        assert stream.get_extra_info("is_readable") is True  # asked anew, not cached


async def test_a_tls_upgrade_keeps_the_facts_and_asks_the_tls_stream_for_the_rest() -> None:
    ours, theirs = socket.socketpair(socket.AF_UNIX)
    with ours, theirs:
        inner = CountingStream(ours)
        tls = await ConnectedStream.of(inner).start_tls(None)  # type: ignore[arg-type]
        assert isinstance(tls, ConnectedStream)
        assert tls.get_extra_info("socket") is ours
        assert tls.get_extra_info("ssl_object") == "the ssl object"


def test_a_closed_or_missing_socket_reads_as_readable() -> None:
    """httpcore then drops the pooled connection: its next read would end it."""
    ours, theirs = socket.socketpair()
    theirs.close()
    ours.close()
    assert is_readable(ours) is True
    assert is_readable(None) is True


def test_a_peer_that_closed_makes_the_socket_readable() -> None:
    ours, theirs = socket.socketpair()
    with ours:
        assert is_readable(ours) is False
        theirs.close()
        assert is_readable(ours) is True
