"""A tenant's own proxy pool on the real stack (emulators, a dispatcher and a worker of their own
project in api_key mode with SCRAPEJOBS_TENANT_PROXIES, real proxies on loopback): an admin
gives tenant acme a French proxy with credentials; firecrawl-py unmodified with acme's key and
``location={"country": "FR"}`` goes through it (asked for an address, never a name), the same
request with another tenant's key is refused at submit; the credentials are in no answer, error
or service log."""

from __future__ import annotations

import ipaddress
import uuid
from collections.abc import Iterator
from pathlib import Path
from urllib.parse import urlsplit

import httpx
import pytest
from firecrawl import Firecrawl
from firecrawl.v2.utils.error_handler import BadRequestError

from scrapejobs_devstack.local_proxy import LocalProxy
from scrapejobs_devstack.stack import Stack
from support.lone_stack import lone_stack
from support.site import Site

pytestmark = [pytest.mark.emulators, pytest.mark.stack]

ADMIN_KEY = "sj_tenant-proxies-e2e-admin-key-0123456789abcdefghijklmnopqrstuv"
SECRET = "fr-s3cret-pw"


@pytest.fixture(scope="module")
def french_proxy(tmp_path_factory: pytest.TempPathFactory) -> Iterator[LocalProxy]:
    proxy = LocalProxy(tmp_path_factory.mktemp("fr-proxy"), user="acme", password=SECRET)
    proxy.start()
    try:
        yield proxy
    finally:
        proxy.stop()


@pytest.fixture(scope="module")
def tenants_stack(stack: Stack, tmp_path_factory: pytest.TempPathFactory) -> Iterator[Stack]:
    from scrapejobs_dispatcher.tenants.api_keys import hash_api_key

    pools = {"SCRAPEJOBS_PROXIES": stack.config.dispatcher_env["SCRAPEJOBS_PROXIES"]}
    env = {
        "SCRAPEJOBS_AUTH_MODE": "api_key",
        "SCRAPEJOBS_API_KEY_HASHES": hash_api_key(ADMIN_KEY),
        "SCRAPEJOBS_TENANT_PROXIES": "true",
        **pools,
    }
    logs: Path = tmp_path_factory.mktemp("tenant-proxy-logs")
    worker_env = {"SCRAPEJOBS_TENANT_PROXIES": "true"}
    with lone_stack(stack, "scrapejobs-tenant-proxies", logs, env, worker_env=worker_env) as lone:
        yield lone


def _to_site(proxy: LocalProxy, site: Site) -> list[tuple[str, str, int]]:
    port = urlsplit(site.url).port
    return [tunnel for tunnel in proxy.tunnels() if tunnel[2] == port]


def test_a_tenants_pool_carries_its_jobs_alone_and_its_credentials_stay_unsaid(
    tenants_stack: Stack, site: Site, french_proxy: LocalProxy
) -> None:
    url = tenants_stack.config.dispatcher_url
    admin = {"Authorization": f"Bearer {ADMIN_KEY}"}
    with httpx.Client(base_url=url, timeout=30) as api:
        keys = {}
        for tenant in ("acme", "other"):
            made = api.post("/v1/keys", json={"tenant": tenant}, headers=admin)
            assert made.status_code == 201, made.text
            keys[tenant] = made.json()["key"]
        given = api.put(
            "/v1/tenants/acme/proxies",
            json={"proxies": [{"url": french_proxy.url("socks5"), "country": "FR"}]},
            headers=admin,
        )
        assert given.status_code == 200, given.text
        assert given.json()["proxies"] == [
            {"proxy": f"socks5://127.0.0.1:{french_proxy.port}", "country": "FR", "tier": "basic"}
        ]
        shown = api.get("/v1/tenants/acme/proxies", headers=admin)
    page = f"{site.url}/article/{uuid.uuid4().int % 10_000}"

    acme = Firecrawl(api_key=keys["acme"], api_url=url)
    document = acme.scrape(page, location={"country": "FR"}, max_age=0)
    assert document.markdown and document.metadata.status_code == 200
    assert document.metadata.proxy_used == "basic"
    assert [protocol for protocol, _, _ in _to_site(french_proxy, site)] == ["socks5"]
    assert all(ipaddress.ip_address(host) for _, host, _ in french_proxy.tunnels())

    other = Firecrawl(api_key=keys["other"], api_url=url)
    with pytest.raises(BadRequestError) as refused:
        other.scrape(page, location={"country": "FR"}, max_age=0)
    assert "location.country" in str(refused.value)
    assert len(_to_site(french_proxy, site)) == 1  # nothing more went through it

    logs = [log.read_text() for log in tenants_stack.config.log_dir.glob("*.log")]
    assert logs
    for text in [given.text, shown.text, str(refused.value), *logs]:
        assert SECRET not in text
