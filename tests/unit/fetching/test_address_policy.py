"""Pure tests of the SSRF address policy."""

from __future__ import annotations

import ipaddress

import pytest

from scrapejobs_shared.ports.fetcher import BlockedDestination
from scrapejobs_worker.fetching import FetchPolicy
from scrapejobs_worker.fetching.address_policy import AddressPolicy, blocked_reason


def _teredo(client_v4: str, server_v4: str = "65.54.227.120") -> str:
    server = int(ipaddress.IPv4Address(server_v4))
    client = int(ipaddress.IPv4Address(client_v4)) ^ 0xFFFFFFFF
    return str(ipaddress.IPv6Address((0x20010000 << 96) | (server << 64) | client))


BLOCKED = [
    "0.0.0.0",
    "0.1.2.3",
    "10.0.0.1",
    "10.255.255.255",
    "100.64.0.1",
    "100.127.255.254",
    "127.0.0.1",
    "127.255.255.254",
    "169.254.169.254",
    "169.254.0.1",
    "172.16.0.1",
    "172.31.255.255",
    "192.0.0.1",
    "192.0.2.1",
    "192.88.99.1",
    "192.168.0.1",
    "198.18.0.1",
    "198.19.255.255",
    "198.51.100.1",
    "203.0.113.1",
    "224.0.0.1",
    "239.255.255.250",
    "240.0.0.1",
    "255.255.255.255",
    "::",
    "::1",
    "::127.0.0.1",
    "::8.8.8.8",
    "::ffff:127.0.0.1",
    "::ffff:10.0.0.1",
    "::ffff:169.254.169.254",
    "::ffff:0.0.0.0",
    "64:ff9b::127.0.0.1",
    "64:ff9b::a9fe:a9fe",
    "64:ff9b:1::8.8.8.8",
    "100::1",
    "2001:db8::1",
    "2001:2::1",
    "2002:7f00:0001::1",
    "2002:0a00:0001::1",
    "2002:a9fe:a9fe::1",
    _teredo("10.0.0.1"),
    _teredo("192.168.1.1"),
    _teredo("127.0.0.1"),
    _teredo("8.8.8.8", server_v4="10.0.0.1"),
    _teredo("8.8.8.8"),  # Teredo is refused as part of 2001::/23 anyway
    "3fff::1",
    "5f00::1",
    "fc00::1",
    "fd00:ec2::254",
    "fe80::1",
    "febf::1",
    "fec0::1",
    "ff02::1",
    "ff0e::1",
    "1::1",
    "4000::1",
    "fe80::1%eth0",
]

ALLOWED = [
    "8.8.8.8",
    "1.1.1.1",
    "93.184.215.14",
    "172.15.255.255",
    "172.32.0.1",
    "100.63.255.255",
    "100.128.0.1",
    "192.169.0.1",
    "223.255.255.254",
    "2606:4700:4700::1111",
    "2a00:1450:4001:830::200e",
    "::ffff:8.8.8.8",
    "64:ff9b::8.8.8.8",
    "2002:0808:0808::1",
]


@pytest.mark.parametrize("address", BLOCKED)
def test_non_global_addresses_are_refused(address):
    ip = ipaddress.ip_address(address)
    assert blocked_reason(ip) is not None
    with pytest.raises(BlockedDestination):
        AddressPolicy().check_address(ip, 80)


@pytest.mark.parametrize("address", ALLOWED)
def test_global_addresses_are_allowed_on_web_ports(address):
    ip = ipaddress.ip_address(address)
    assert blocked_reason(ip) is None
    for port in (80, 443, 8080, 8443):
        AddressPolicy().check_address(ip, port)


@pytest.mark.parametrize("port", [0, 22, 25, 6379, 5432, 9000, 65535])
def test_other_ports_are_refused(port):
    policy = AddressPolicy()
    with pytest.raises(BlockedDestination):
        policy.check_address(ipaddress.ip_address("8.8.8.8"), port)
    with pytest.raises(BlockedDestination):
        policy.check_port_early(port)


def test_allowlist_overrides_refusal_on_any_port():
    policy = FetchPolicy(allowlist=("127.0.0.0/8", "::1/128")).address_policy()
    for address in ("127.0.0.1", "127.0.0.2", "::1", "::ffff:127.0.0.1"):
        policy.check_address(ipaddress.ip_address(address), 31337)
    policy.check_port_early(31337)  # decided per address once resolved
    for address in ("10.0.0.1", "169.254.169.254", "::2"):
        with pytest.raises(BlockedDestination):
            policy.check_address(ipaddress.ip_address(address), 80)
    with pytest.raises(BlockedDestination):
        policy.check_address(ipaddress.ip_address("8.8.8.8"), 31337)


def test_refused_ports_hold_on_allowlisted_addresses_too():
    # the local stack: loopback sites are fetchable, its emulators and services are not
    policy = FetchPolicy(allowlist=("127.0.0.0/8",), refused_ports=(8085, 8086)).address_policy()
    policy.check_address(ipaddress.ip_address("127.0.0.1"), 31337)
    for port in (8085, 8086):
        with pytest.raises(BlockedDestination, match=f"port {port} is not allowed"):
            policy.check_address(ipaddress.ip_address("127.0.0.1"), port)
        with pytest.raises(BlockedDestination):
            policy.check_port_early(port)


def test_a_refusal_never_names_the_address():
    with pytest.raises(BlockedDestination) as caught:
        AddressPolicy().check_address(ipaddress.ip_address("10.1.2.3"), 80)
    assert "10.1.2.3" not in str(caught.value) and "refused address" in str(caught.value)


def test_narrow_allowlist_does_not_cover_neighbours():
    policy = FetchPolicy(allowlist=("127.0.0.1/32",)).address_policy()
    policy.check_address(ipaddress.ip_address("127.0.0.1"), 80)
    with pytest.raises(BlockedDestination):
        policy.check_address(ipaddress.ip_address("127.0.0.2"), 80)


def test_production_defaults():
    policy = FetchPolicy()
    assert policy.allowlist == ()
    assert policy.allowed_ports == (80, 443, 8080, 8443)
    assert policy.max_redirects == 5
    assert policy.max_body_bytes == 10 * 1024 * 1024
    assert policy.max_decoded_bytes == 20 * 1024 * 1024
    assert policy.address_policy().allowlist == ()


@pytest.mark.parametrize(
    "host",
    [
        "metadata",
        "METADATA",
        "metadata.google.internal",
        "Metadata.Google.Internal.",
        "instance-1.us-central1-a.c.my-project.internal",
        "x.internal.",
    ],
)
def test_metadata_and_internal_names_are_refused_by_name(host):
    policy = FetchPolicy(allowlist=("0.0.0.0/0", "::/0")).address_policy()
    with pytest.raises(BlockedDestination):
        policy.check_hostname(host)


@pytest.mark.parametrize("host", ["example.com", "internal.example.com", "metadata.example"])
def test_ordinary_names_pass_the_name_check(host):
    AddressPolicy().check_hostname(host)


@pytest.mark.parametrize(
    "kwargs",
    [
        {"allowlist": ("127.0.0.1/8",)},
        {"allowlist": ("not-a-network",)},
        {"allowed_ports": (0,)},
        {"max_redirects": -1},
        {"max_body_bytes": 0},
        {"max_decoded_bytes": 0},
        {"max_compression_ratio": 0.5},
        {"read_timeout_s": float("inf")},
    ],
)
def test_invalid_configuration_fails_fast(kwargs):
    with pytest.raises(ValueError):
        FetchPolicy(**kwargs)
