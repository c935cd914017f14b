"""Resolver: one lookup, every address vetted, DNS errors classified."""

from __future__ import annotations

import ipaddress
import socket

import pytest

from scrapejobs_shared.ports.fetcher import (
    BlockedDestination,
    PermanentFetchError,
    TransientFetchError,
)
from scrapejobs_worker.fetching import FetchPolicy
from scrapejobs_worker.fetching.resolver import Resolver


class _Answers:
    """A fake getaddrinfo that always returns ``addresses`` and records the queried names."""

    def __init__(self, *addresses: str) -> None:
        self.addresses = addresses
        self.calls: list[str] = []

    async def __call__(self, host: str, port: int):
        self.calls.append(host)
        return [(socket.AF_INET, socket.SOCK_STREAM, 6, "", (a, port)) for a in self.addresses]


def _failing(errno: int):
    async def getaddrinfo(host: str, port: int):
        raise socket.gaierror(errno, "boom")

    return getaddrinfo


async def test_all_addresses_are_returned_in_order_and_deduplicated():
    lookup = _Answers("93.184.215.14", "2606:2800:21f:cb07:6820:80da:af6b:8b2c", "93.184.215.14")
    resolved = await Resolver(FetchPolicy().address_policy(), lookup).resolve("example.com", 443)
    assert resolved.host == "example.com"
    assert resolved.port == 443
    assert [str(a) for a in resolved.addresses] == [
        "93.184.215.14",
        "2606:2800:21f:cb07:6820:80da:af6b:8b2c",
    ]
    assert lookup.calls == ["example.com"]


async def test_one_refused_address_refuses_the_host():
    lookup = _Answers("93.184.215.14", "10.0.0.7")
    with pytest.raises(BlockedDestination):
        await Resolver(FetchPolicy().address_policy(), lookup).resolve("mixed.example", 80)


async def test_literal_addresses_skip_dns():
    lookup = _Answers("10.0.0.1")
    resolver = Resolver(FetchPolicy().address_policy(), lookup)
    resolved = await resolver.resolve("8.8.8.8", 80)
    assert resolved.addresses == (ipaddress.ip_address("8.8.8.8"),)
    with pytest.raises(BlockedDestination):
        await resolver.resolve("::1", 80)
    assert lookup.calls == []


async def test_refused_names_and_ports_skip_dns():
    lookup = _Answers("8.8.8.8")
    resolver = Resolver(FetchPolicy().address_policy(), lookup)
    with pytest.raises(BlockedDestination):
        await resolver.resolve("metadata.google.internal", 80)
    with pytest.raises(BlockedDestination):
        await resolver.resolve("example.com", 22)
    assert lookup.calls == []


@pytest.mark.parametrize(
    "host", ["2130706433", "0x7f.0.0.1", "0x7f000001", "017700000001", "127.1"]
)
async def test_numeric_spellings_are_checked_as_the_system_resolver_reads_them(host):
    # Real getaddrinfo: these are parsed locally (inet_aton), no DNS traffic.
    with pytest.raises(BlockedDestination):
        await Resolver(FetchPolicy().address_policy()).resolve(host, 80)


async def test_nxdomain_is_permanent():
    resolver = Resolver(FetchPolicy().address_policy(), _failing(socket.EAI_NONAME))
    with pytest.raises(PermanentFetchError) as caught:
        await resolver.resolve("nope.example", 80)
    assert caught.value.reason == "dns_error"
    assert not caught.value.transient


async def test_temporary_dns_failure_is_transient():
    resolver = Resolver(FetchPolicy().address_policy(), _failing(socket.EAI_AGAIN))
    with pytest.raises(TransientFetchError) as caught:
        await resolver.resolve("flaky.example", 80)
    assert caught.value.reason == "dns_error"


async def test_empty_answer_is_permanent():
    resolver = Resolver(FetchPolicy().address_policy(), _Answers())
    with pytest.raises(PermanentFetchError) as caught:
        await resolver.resolve("empty.example", 80)
    assert caught.value.reason == "dns_error"
