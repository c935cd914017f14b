"""HTTPS through the pinned backend: the TCP connection goes to the vetted IP while SNI and
certificate verification use the URL's host name."""

from __future__ import annotations

import datetime
import ipaddress
import json
import ssl

import pytest
from cryptography import x509
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec
from cryptography.x509.oid import NameOID

from scrapejobs_shared.options.proxy_pools import ProxyChoice, parse_pool
from scrapejobs_shared.ports.fetcher import FetchRequest, FetchRoute, PermanentFetchError
from scrapejobs_worker.fetching import FetchPolicy, SafeFetcher
from scrapejobs_worker.fetching.resolver import Resolver

HOST = "secure.example"


def _name(common_name: str) -> x509.Name:
    return x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, common_name)])


def _issue(subject: str, key, issuer: str, issuer_key, *, ca: bool, sans=()) -> x509.Certificate:
    now = datetime.datetime.now(datetime.UTC)
    builder = (
        x509.CertificateBuilder()
        .subject_name(_name(subject))
        .issuer_name(_name(issuer))
        .public_key(key.public_key())
        .serial_number(x509.random_serial_number())
        .not_valid_before(now - datetime.timedelta(minutes=5))
        .not_valid_after(now + datetime.timedelta(hours=1))
        .add_extension(x509.BasicConstraints(ca=ca, path_length=None), critical=True)
    )
    if sans:
        builder = builder.add_extension(x509.SubjectAlternativeName(list(sans)), critical=False)
    return builder.sign(issuer_key, hashes.SHA256())


def _pem(cert: x509.Certificate) -> bytes:
    return cert.public_bytes(serialization.Encoding.PEM)


@pytest.fixture(scope="module")
def tls_material(tmp_path_factory):
    ca_key = ec.generate_private_key(ec.SECP256R1())
    ca = _issue("scrapejobs test CA", ca_key, "scrapejobs test CA", ca_key, ca=True)
    leaf_key = ec.generate_private_key(ec.SECP256R1())
    # The IP SAN makes the negative test meaningful: were the certificate checked against the
    # connected IP instead of the URL's host name, the impostor name would pass.
    sans = [x509.DNSName(HOST), x509.IPAddress(ipaddress.IPv4Address("127.0.0.1"))]
    leaf = _issue(HOST, leaf_key, "scrapejobs test CA", ca_key, ca=False, sans=sans)
    directory = tmp_path_factory.mktemp("tls")
    cert_file, key_file = directory / "leaf.pem", directory / "leaf.key"
    cert_file.write_bytes(_pem(leaf) + _pem(ca))
    key_file.write_bytes(
        leaf_key.private_bytes(
            serialization.Encoding.PEM,
            serialization.PrivateFormat.PKCS8,
            serialization.NoEncryption(),
        )
    )
    return _pem(ca).decode(), cert_file, key_file


@pytest.fixture
async def tls_server(tls_material, server_factory):
    _, cert_file, key_file = tls_material
    seen_sni: list[str | None] = []
    context = ssl.create_default_context(ssl.Purpose.CLIENT_AUTH)
    context.load_cert_chain(cert_file, key_file)
    context.sni_callback = lambda _sock, name, _ctx: seen_sni.append(name)
    server = await server_factory(("127.0.0.1",), ssl_context=context)
    server.serve("/", b"over tls")
    return server, seen_sni


def _fetcher(
    fetcher_factory, fake_dns, tls_material, names: list[str], allow_unverified: bool = True
) -> SafeFetcher:
    ca_pem, _, _ = tls_material
    policy = FetchPolicy(allowlist=("127.0.0.1/32",), allow_unverified_tls=allow_unverified)
    getaddrinfo = fake_dns({name: ["127.0.0.1"] for name in names})
    fetcher: SafeFetcher = fetcher_factory(
        policy,
        resolver=Resolver(policy.address_policy(), getaddrinfo),
        ssl_context=ssl.create_default_context(cadata=ca_pem),
    )
    return fetcher


async def test_tls_uses_the_host_name_for_sni_and_verification(
    tls_server, tls_material, fetcher_factory, fake_dns
):
    server, seen_sni = tls_server
    fetcher = _fetcher(fetcher_factory, fake_dns, tls_material, [HOST])

    response = await fetcher.fetch(FetchRequest(f"https://{HOST}:{server.port}/", timeout_s=5))

    assert response.body == b"over tls"
    assert seen_sni == [HOST]
    assert server.requests[0].headers["host"] == f"{HOST}:{server.port}"


@pytest.mark.parametrize("scheme", ["http", "socks5"])
async def test_through_a_proxy_tls_inside_the_tunnel_uses_the_host_name(
    scheme, tls_server, tls_material, fetcher_factory, fake_dns, proxies
):
    """The proxy is asked for the address; the certificate is checked against the name, inside
    the tunnel (an impostor name fails there, as it does direct)."""
    server, seen_sni = tls_server
    proxy = proxies()
    ca_pem, _, _ = tls_material
    pool = parse_pool(json.dumps([{"url": proxy.url(scheme)}]))
    policy = FetchPolicy(allowlist=("127.0.0.1/32",), proxies=pool)
    getaddrinfo = fake_dns({HOST: ["127.0.0.1"], "impostor.example": ["127.0.0.1"]})
    fetcher = fetcher_factory(
        policy,
        resolver=Resolver(policy.address_policy(), getaddrinfo),
        ssl_context=ssl.create_default_context(cadata=ca_pem),
    )

    url = f"https://{HOST}:{server.port}/"
    response = await fetcher.fetch(
        FetchRequest(url, timeout_s=5, route=FetchRoute(proxy=ProxyChoice()))
    )

    assert response.body == b"over tls" and response.proxy is not None
    assert seen_sni == [HOST]
    assert proxy.tunnels() == [(scheme, "127.0.0.1", server.port)]
    impostor = FetchRequest(
        f"https://impostor.example:{server.port}/", route=FetchRoute(proxy=ProxyChoice())
    )
    with pytest.raises(PermanentFetchError) as caught:
        await fetcher.fetch(impostor)
    assert caught.value.reason == "tls_error"
    assert len(server.requests) == 1
    assert fetcher.proxy_counts()[f"{scheme}://127.0.0.1:{proxy.port}"].failed == 0


async def test_certificate_for_another_name_is_a_permanent_tls_error(
    tls_server, tls_material, fetcher_factory, fake_dns
):
    server, _ = tls_server
    fetcher = _fetcher(fetcher_factory, fake_dns, tls_material, ["impostor.example"])

    with pytest.raises(PermanentFetchError) as caught:
        await fetcher.fetch(FetchRequest(f"https://impostor.example:{server.port}/", timeout_s=5))
    assert caught.value.reason == "tls_error"
    assert server.requests == []


async def test_verify_tls_off_fetches_a_failing_certificate_and_says_so(
    tls_server, tls_material, fetcher_factory, fake_dns
):
    server, _ = tls_server
    fetcher = _fetcher(fetcher_factory, fake_dns, tls_material, ["impostor.example"])
    url = f"https://impostor.example:{server.port}/"

    response = await fetcher.fetch(
        FetchRequest(url, timeout_s=5, route=FetchRoute(verify_tls=False))
    )

    assert response.body == b"over tls" and response.tls_unverified is True
    assert len(server.requests) == 1


async def test_with_the_switch_off_the_worker_verifies_whatever_the_task_says(
    tls_server, tls_material, fetcher_factory, fake_dns
):
    """The review: work published while the switch was on (a reconcile republishes it) was
    fetched unverified after it was turned off; the worker checks the switch itself."""
    server, _ = tls_server
    fetcher = _fetcher(
        fetcher_factory, fake_dns, tls_material, ["impostor.example"], allow_unverified=False
    )
    url = f"https://impostor.example:{server.port}/"

    with pytest.raises(PermanentFetchError) as caught:
        await fetcher.fetch(FetchRequest(url, timeout_s=5, route=FetchRoute(verify_tls=False)))
    assert caught.value.reason == "tls_error"
    assert server.requests == []


async def test_verify_tls_off_still_verifies_a_good_certificate(
    tls_server, tls_material, fetcher_factory, fake_dns
):
    server, _ = tls_server
    fetcher = _fetcher(fetcher_factory, fake_dns, tls_material, [HOST])

    response = await fetcher.fetch(
        FetchRequest(
            f"https://{HOST}:{server.port}/", timeout_s=5, route=FetchRoute(verify_tls=False)
        )
    )

    assert response.body == b"over tls" and response.tls_unverified is False


async def test_verify_tls_off_keeps_the_address_checks(tls_server, fetcher_factory, fake_dns):
    server, _ = tls_server
    policy = FetchPolicy()  # loopback not allowed
    getaddrinfo = fake_dns({"impostor.example": ["127.0.0.1"]})
    fetcher = fetcher_factory(policy, resolver=Resolver(policy.address_policy(), getaddrinfo))

    with pytest.raises(PermanentFetchError) as caught:
        await fetcher.fetch(
            FetchRequest(
                f"https://impostor.example:{server.port}/",
                timeout_s=5,
                route=FetchRoute(verify_tls=False),
            )
        )
    assert caught.value.reason == "blocked_destination"
    assert server.requests == []
