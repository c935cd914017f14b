"""The pinned connector's parts: the resolver answers only the pinned addresses of the current
request, the socket factory makes sockets only for them, and the peer check fails closed."""

from __future__ import annotations

import ipaddress
import socket

import pytest

from scrapejobs_shared.ports.fetcher import BlockedDestination
from scrapejobs_worker.fetching import FetchPolicy
from scrapejobs_worker.fetching.pinned_connector import (
    PinnedResolver,
    PinnedSockets,
    pin_destination,
    verify_peer,
)
from scrapejobs_worker.fetching.resolver import ResolvedDestination


def _destination(host: str, port: int, *addresses: str) -> ResolvedDestination:
    return ResolvedDestination(host, port, tuple(ipaddress.ip_address(a) for a in addresses))


POLICY = FetchPolicy().address_policy()


def _addr_info(address: str, port: int) -> tuple[int, int, int, str, tuple[object, ...]]:
    family = socket.AF_INET6 if ":" in address else socket.AF_INET
    return (family, socket.SOCK_STREAM, 6, "", (address, port))


async def test_resolves_the_name_to_the_pinned_addresses_in_order():
    resolver = PinnedResolver()
    with pin_destination(_destination("example.com", 443, "2606:4700::1", "93.184.215.14")):
        answers = await resolver.resolve("Example.com", 443)
    assert [(a["host"], a["port"], a["family"]) for a in answers] == [
        ("2606:4700::1", 443, socket.AF_INET6),
        ("93.184.215.14", 443, socket.AF_INET),
    ]
    assert {a["hostname"] for a in answers} == {"Example.com"}


async def test_refuses_to_resolve_without_a_pin_or_for_another_destination():
    resolver = PinnedResolver()
    with pytest.raises(BlockedDestination):
        await resolver.resolve("example.com", 80)
    with pin_destination(_destination("example.com", 80, "93.184.215.14")):
        with pytest.raises(BlockedDestination):
            await resolver.resolve("other.example", 80)
        with pytest.raises(BlockedDestination):
            await resolver.resolve("example.com", 8080)


def test_a_socket_is_made_only_for_a_pinned_address_on_the_pinned_port():
    sockets = PinnedSockets(POLICY)
    with pytest.raises(BlockedDestination):
        sockets(_addr_info("93.184.215.14", 80))  # nothing pinned
    with pin_destination(_destination("example.com", 80, "93.184.215.14")):
        made = sockets(_addr_info("93.184.215.14", 80))
        made.close()
        assert made.family == socket.AF_INET
        with pytest.raises(BlockedDestination):
            sockets(_addr_info("93.184.215.15", 80))
        with pytest.raises(BlockedDestination):
            sockets(_addr_info("93.184.215.14", 8080))


def test_a_socket_rechecks_the_policy_right_before_connecting():
    sockets = PinnedSockets(POLICY)
    sneaky = _destination("sneaky.example", 80, "169.254.169.254")
    with pin_destination(sneaky), pytest.raises(BlockedDestination):
        sockets(_addr_info("169.254.169.254", 80))


def test_verify_peer_fails_closed():
    verify_peer(("93.184.215.14", 443), POLICY)
    verify_peer(("2606:4700::1", 443, 0, 0), POLICY)
    with pytest.raises(BlockedDestination):
        verify_peer(("10.1.2.3", 443), POLICY)
    with pytest.raises(BlockedDestination):
        verify_peer(None, POLICY)
    with pytest.raises(BlockedDestination):
        verify_peer(("not an address", 443), POLICY)
