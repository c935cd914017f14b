"""The proxy family (scrapejobs_shared/options/proxy.py): pools read from the deployment's list
without a credential in any error; a job asking for a tier or a country no pool serves refused
at submit naming the field and the value, never sent direct instead; Firecrawl's ``proxy`` and
``location.country`` become the native ``options.proxy``."""

from __future__ import annotations

import json

import pytest
from pydantic import SecretStr

from scrapejobs_dispatcher.firecrawl.request_models import ScrapeBody
from scrapejobs_dispatcher.firecrawl.translation import scrape_request
from scrapejobs_dispatcher.settings import DispatcherSettings
from scrapejobs_shared.adapters.memory.job_store import MemoryJobStore
from scrapejobs_shared.domain.jobspec import JobOptions
from scrapejobs_shared.options import PROXY
from scrapejobs_shared.options.proxy import ProxyOptions, refusal
from scrapejobs_shared.options.proxy_pools import (
    InvalidProxies,
    ProxyChoice,
    ProxyPool,
    parse_pool,
)
from support.memory_dispatcher import memory_client

POOL = json.dumps(
    [
        {"url": "http://user:hunter2@proxy-de.example:3128", "country": "de"},
        {"url": "socks5://user:hunter2@[2001:db8::5]:1080", "country": "US"},
        {"url": "https://proxy-any.example", "tier": "stealth"},
        "http://plain.example:8080",
    ]
)

HERE = "pool serves this country here"


def test_a_pool_is_read_with_its_defaults_and_named_without_credentials() -> None:
    pool = parse_pool(POOL)
    de, us, stealth, plain = pool.servers
    assert (de.country, de.tier, de.port, de.username, de.password) == (
        "DE",
        "basic",
        3128,
        "user",
        "hunter2",
    )
    assert us.label == "socks5://[2001:db8::5]:1080" and us.host == "2001:db8::5"
    assert (stealth.port, stealth.tier, stealth.country) == (443, "stealth", None)
    assert plain.label == "http://plain.example:8080"
    assert "hunter2" not in repr(pool) and "hunter2" not in de.label
    assert pool.serving(ProxyChoice("basic", "DE")) == (de,)
    assert pool.serving(ProxyChoice()) == (de, us, plain)
    assert pool.countries("basic") == ["DE", "US"] and pool.countries("stealth") == []
    assert parse_pool("") == ProxyPool() and not parse_pool("  ")


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("{", "not JSON"),
        ('{"url": "http://a:1"}', "a JSON list"),
        ('[{"url": "ftp://u:hunter2@a:1"}]', r"\[0\].url: the scheme"),
        ('[{"url": "http://u:hunter2@a:99999"}]', r"\[0\].url: not a URL with a valid port"),
        ('[{"url": "http://u:hunter2@a:1/path"}]', "no path"),
        ('[{"url": "http://u:hunter2@a:1", "country": "Germany"}]', r"\[0\].country"),
        ('[{"url": "http://u:hunter2@a:1", "tier": "gold"}]', r"\[0\].tier"),
        ('["http://a:1", {"url": "http://u:hunter2@b:1", "weight": 2}]', r"\[1\]: unknown"),
        ("[{}]", "an object with a url"),
    ],
)
def test_a_list_that_cannot_be_read_names_the_entry_and_never_its_credentials(
    text: str, message: str
) -> None:
    with pytest.raises(InvalidProxies, match=message) as caught:
        parse_pool(text)
    assert "hunter2" not in str(caught.value)


def test_the_setting_stops_a_start_without_showing_the_list() -> None:
    settings = DispatcherSettings(proxies=SecretStr('[{"url": "ftp://u:hunter2@a:1"}]'))
    assert "hunter2" not in repr(settings) and "hunter2" not in str(settings.model_dump())
    with pytest.raises(InvalidProxies) as caught:
        settings.served_here()
    assert "hunter2" not in str(caught.value)


@pytest.mark.parametrize(
    ("asked", "said"),
    [
        (
            {"country": "FR"},
            "FR: no basic proxy pool serves this country here (countries served: DE, US)",
        ),
        (
            {"tier": "stealth", "country": "DE"},
            "DE: no stealth proxy pool serves this country here",
        ),
        (
            {"tier": "auto", "country": "FR"},
            "FR: no proxy pool serves this country here (countries served: DE, US)",
        ),
    ],
)
def test_what_no_pool_serves_is_refused_saying_what_is(asked: dict[str, str], said: str) -> None:
    refused = refusal(ProxyOptions.model_validate(asked), parse_pool(POOL))
    assert refused is not None and refused.field == "options.proxy.country"
    assert refused.reason == said


def test_what_the_pools_or_the_own_route_serve_is_not_refused() -> None:
    pool = parse_pool(POOL)
    for asked in (
        {},
        {"tier": "auto"},
        {"tier": "stealth"},
        {"country": "DE"},
        {"tier": "auto", "country": "US"},
    ):
        assert refusal(ProxyOptions.model_validate(asked), pool) is None, asked
    nothing = ProxyPool()
    assert refusal(ProxyOptions(), nothing) is None  # basic: the deployment's own route
    assert refusal(ProxyOptions(tier="auto"), nothing) is None
    stealth = refusal(ProxyOptions(tier="stealth"), nothing)
    assert stealth is not None and stealth.field == "options.proxy.tier"


def test_a_job_s_choice_is_what_its_first_fetch_goes_through() -> None:
    assert PROXY.choice(JobOptions()) is None  # the deployment's default
    auto = JobOptions.model_validate({"proxy": {"tier": "auto", "country": "DE"}})
    assert PROXY.choice(auto) == ProxyChoice("basic", "DE") and PROXY.escalates(auto)
    stealth = JobOptions.model_validate({"proxy": {"tier": "stealth"}})
    assert PROXY.choice(stealth) == ProxyChoice("stealth") and not PROXY.escalates(stealth)
    with pytest.raises(ValueError, match="country"):
        JobOptions.model_validate({"proxy": {"country": "de"}})  # upper case, as ISO writes it


@pytest.mark.parametrize(
    ("given", "native"),
    [
        ({"proxy": "basic"}, {"tier": "basic"}),
        ({"proxy": "enhanced"}, {"tier": "stealth"}),
        ({"proxy": "stealth", "location": {"country": "us"}}, {"tier": "stealth", "country": "US"}),
        ({"location": {"country": "DE", "languages": ["de"]}}, {"tier": "basic", "country": "DE"}),
        ({"proxy": "auto"}, {"tier": "auto"}),
    ],
)
def test_firecrawl_s_proxy_and_country_become_the_native_choice(
    given: dict[str, object], native: dict[str, str]
) -> None:
    request = scrape_request(ScrapeBody.model_validate({"url": "https://a.example/", **given}))
    assert PROXY.of(request.options) == ProxyOptions.model_validate(native)


async def test_a_country_no_pool_serves_is_refused_at_submit_and_one_served_is_kept() -> None:
    store = MemoryJobStore()
    settings = DispatcherSettings(auth_mode="none", proxies=SecretStr(POOL))
    async with memory_client(store, settings) as client:
        native = await client.post(
            "/v1/jobs",
            json={"url": "https://a.example/", "options": {"proxy": {"country": "FR"}}},
        )
        assert native.status_code == 422, native.text
        error = native.json()["error"]
        assert error["field"] == "options.proxy.country"
        assert error["message"].endswith(f"FR: no basic proxy {HERE} (countries served: DE, US)")
        firecrawl = await client.post(
            "/v2/batch/scrape",
            json={"urls": ["https://a.example/"], "location": {"country": "FR"}},
        )
        assert firecrawl.status_code == 400, firecrawl.text
        assert firecrawl.json()["field"] == "location.country"
        assert not store.jobs
        served = await client.post(
            "/v2/batch/scrape",
            json={"urls": ["https://a.example/"], "location": {"country": "de"}, "proxy": "auto"},
        )
        assert served.status_code == 200, served.text
    [job] = store.jobs.values()
    assert PROXY.of(job.spec.options) == ProxyOptions(tier="auto", country="DE")
