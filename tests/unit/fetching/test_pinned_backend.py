"""The pinned backend connects only to the vetted addresses of the current request."""

from __future__ import annotations

import ipaddress

import httpcore
import pytest

from scrapejobs_shared.ports.fetcher import BlockedDestination
from scrapejobs_worker.fetching import FetchPolicy
from scrapejobs_worker.fetching.pinned_backend import (
    PinnedNetworkBackend,
    pin_destination,
    verify_peer,
)
from scrapejobs_worker.fetching.resolver import ResolvedDestination


class RecordingBackend(httpcore.AsyncNetworkBackend):
    def __init__(self, refuse: set[str] | None = None) -> None:
        self.calls: list[tuple[str, int]] = []
        self.refuse = refuse or set()

    async def connect_tcp(self, host, port, timeout=None, local_address=None, socket_options=None):
        self.calls.append((host, port))
        if host in self.refuse:
            raise httpcore.ConnectError("refused")
        return FakeStream((host, port))

    async def sleep(self, seconds):
        return None


class FakeStream(httpcore.AsyncNetworkStream):
    def __init__(self, peer: object) -> None:
        self.peer = peer

    def get_extra_info(self, info):
        return self.peer if info == "server_addr" else None


def _destination(host: str, port: int, *addresses: str) -> ResolvedDestination:
    return ResolvedDestination(host, port, tuple(ipaddress.ip_address(a) for a in addresses))


POLICY = FetchPolicy().address_policy()


async def test_connects_to_the_pinned_ip_not_the_name():
    inner = RecordingBackend()
    backend = PinnedNetworkBackend(POLICY, inner)
    with pin_destination(_destination("example.com", 443, "93.184.215.14")):
        stream = await backend.connect_tcp("example.com", 443)
    assert inner.calls == [("93.184.215.14", 443)]
    assert stream.get_extra_info("server_addr") == ("93.184.215.14", 443)


async def test_falls_back_to_the_next_vetted_address():
    inner = RecordingBackend(refuse={"2606:4700::1"})
    backend = PinnedNetworkBackend(POLICY, inner)
    with pin_destination(_destination("example.com", 80, "2606:4700::1", "1.1.1.1")):
        await backend.connect_tcp("example.com", 80)
    assert inner.calls == [("2606:4700::1", 80), ("1.1.1.1", 80)]


async def test_refuses_without_a_pin_or_for_another_destination():
    inner = RecordingBackend()
    backend = PinnedNetworkBackend(POLICY, inner)
    with pytest.raises(BlockedDestination):
        await backend.connect_tcp("example.com", 80)
    with pin_destination(_destination("example.com", 80, "93.184.215.14")):
        with pytest.raises(BlockedDestination):
            await backend.connect_tcp("other.example", 80)
        with pytest.raises(BlockedDestination):
            await backend.connect_tcp("example.com", 8080)
    with pytest.raises(BlockedDestination):
        await backend.connect_unix_socket("/var/run/docker.sock")
    assert inner.calls == []


async def test_rechecks_the_policy_right_before_connecting():
    inner = RecordingBackend()
    backend = PinnedNetworkBackend(POLICY, inner)
    sneaky = _destination("sneaky.example", 80, "169.254.169.254")
    with pin_destination(sneaky), pytest.raises(BlockedDestination):
        await backend.connect_tcp("sneaky.example", 80)
    assert inner.calls == []


def test_verify_peer_fails_closed():
    verify_peer(FakeStream(("93.184.215.14", 443)), POLICY)
    with pytest.raises(BlockedDestination):
        verify_peer(FakeStream(("10.1.2.3", 443)), POLICY)
    with pytest.raises(BlockedDestination):
        verify_peer(FakeStream(None), POLICY)
    with pytest.raises(BlockedDestination):
        verify_peer(None, POLICY)
