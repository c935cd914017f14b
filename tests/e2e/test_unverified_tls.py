"""A site behind a self-signed certificate on the real stack: fetched when the job turns
verification off (native ``options.verify_tls: false``, Firecrawl's ``skipTlsVerification``,
which firecrawl-py 3.0-4.54 sends on every scrape), its result saying so; a clear certificate
error when verification is on (the native default). Where a deployment refuses it:
tests/unit/dispatcher/test_firecrawl_api.py."""

from __future__ import annotations

import uuid
from collections.abc import Iterator

import pytest
from firecrawl import Firecrawl

from scrapejobs_devstack.stack import Stack
from support.tls_site import TlsSite

pytestmark = [pytest.mark.emulators, pytest.mark.stack]


@pytest.fixture(scope="module")
def tls_site(tmp_path_factory: pytest.TempPathFactory) -> Iterator[TlsSite]:
    site = TlsSite(tmp_path_factory.mktemp("tls-site")).start()
    yield site
    site.stop()


async def test_verification_on_is_a_clear_certificate_error(api, tls_site: TlsSite) -> None:
    url = f"{tls_site.url}/page/{uuid.uuid4().hex[:6]}"
    scraped = (await api.post("/v1/scrape", json={"url": url})).json()
    result = scraped["result"]
    assert result["status"] == "failed" and result["error"].startswith("tls_error")
    assert "CERTIFICATE_VERIFY_FAILED" in result["error"] and "verify_tls" in result["error"]


async def test_verify_tls_off_fetches_the_page_and_says_so(api, tls_site: TlsSite) -> None:
    url = f"{tls_site.url}/page/{uuid.uuid4().hex[:6]}"
    body = {"url": url, "options": {"verify_tls": False, "formats": ["markdown"]}}
    scraped = (await api.post("/v1/scrape", json=body)).json()
    result = scraped["result"]
    assert result["status"] == "succeeded", result
    assert result["tls_unverified"] is True
    assert result["data"]["markdown"].startswith("# Behind a self-signed certificate")


def test_firecrawl_s_skip_tls_verification_scrapes_it(stack: Stack, tls_site: TlsSite) -> None:
    firecrawl = Firecrawl(api_key="fc-local", api_url=stack.config.dispatcher_url)
    url = f"{tls_site.url}/fc/{uuid.uuid4().hex[:6]}"

    doc = firecrawl.scrape(url, formats=["markdown"], skip_tls_verification=True, max_age=0)

    assert doc.markdown is not None and doc.markdown.startswith("# Behind a self-signed")
    assert doc.metadata_typed.status_code == 200
    assert (doc.metadata_typed.model_extra or {}).get("tlsVerified") is False
