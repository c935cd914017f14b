"""Option families (scrapejobs_shared/options): each family's fields join the native and the
Firecrawl request models, its translation and its served-here check run where every option's
do, and what it changes in a fetch reaches the fetch; Firecrawl's refused options stay refused
from their one list. Over the in-memory adapters (the SDK and the emulators:
tests/e2e/test_option_families_on_the_stack.py)."""

from __future__ import annotations

from typing import Any

import pytest

from scrapejobs_dispatcher.firecrawl.request_models import (
    BatchScrapeBody,
    CrawlBody,
    MapBody,
    ScrapeBody,
)
from scrapejobs_dispatcher.firecrawl.translation import scrape_request
from scrapejobs_dispatcher.settings import DispatcherSettings
from scrapejobs_shared.adapters.memory.job_store import MemoryJobStore
from scrapejobs_shared.domain.jobspec import JobOptions, JobRequest, ScrapeRequest
from scrapejobs_shared.options import OPTIONS, OptionFamily, OptionRegistry
from scrapejobs_shared.options.data_retention import ZERO_DATA_RETENTION
from scrapejobs_shared.options.location import LOCATION, accept_language
from scrapejobs_shared.options.refused import REFUSED
from support.memory_dispatcher import memory_client


def test_languages_become_one_accept_language_most_wanted_first() -> None:
    assert accept_language(["de-DE"]) == "de-DE"
    assert accept_language(["de-DE", "de", "en"]) == "de-DE,de;q=0.9,en;q=0.8"
    assert accept_language([f"x{n}" for n in range(10)]).endswith("x9;q=0.1")


def test_a_job_s_own_header_wins_over_what_a_family_adds_whatever_its_case() -> None:
    located = JobOptions.model_validate({"location": {"languages": ["fr"]}})
    assert OPTIONS.fetch_headers(located) == {"accept-language": "fr"}
    assert OPTIONS.browser_context(located) == {"locale": "fr"}
    own = JobOptions.model_validate(
        {"location": {"languages": ["fr"]}, "headers": {"Accept-Language": "en-GB"}}
    )
    assert OPTIONS.fetch_headers(own) == {"Accept-Language": "en-GB"}
    plain = JobOptions()
    assert OPTIONS.fetch_headers(plain) == {} and OPTIONS.browser_context(plain) == {}
    assert LOCATION.of(plain) is None


@pytest.mark.parametrize("tag", ["", "de_DE", "a" * 40, "de-DE;q=1", "*"])
def test_a_language_is_a_language_tag(tag: str) -> None:
    with pytest.raises(ValueError, match="languages"):
        JobOptions.model_validate({"location": {"languages": [tag]}})


def test_the_families_fields_are_in_the_models_and_their_documents() -> None:
    assert "location" in JobOptions.model_fields
    assert "zero_data_retention" in ScrapeRequest.model_fields
    assert "zero_data_retention" not in JobRequest.model_fields  # its results are read later
    assert "location" in ScrapeBody.model_json_schema()["properties"]
    assert ScrapeBody.model_json_schema()["properties"]["zeroDataRetention"]["anyOf"]
    for refusing in (BatchScrapeBody, CrawlBody):
        documented = refusing.model_json_schema()["properties"]["zeroDataRetention"]
        assert documented["enum"] == [None, False] and "/v2/scrape" in documented["description"]
    assert MapBody.model_json_schema()["properties"]["location"]["enum"] == [None]


def test_firecrawl_s_refused_options_are_listed_once_and_stay_refused() -> None:
    refused = ScrapeBody.model_json_schema()["properties"]
    for name, refusal in REFUSED.items():
        if "scrape_options" in refusal.kinds:
            assert refused[name]["enum"] == list(refusal.inert), name
    with pytest.raises(ValueError, match="leave fastMode out"):
        ScrapeBody.model_validate({"url": "https://a.example/", "fastMode": True})
    assert ScrapeBody.model_validate({"url": "https://a.example/", "fastMode": False})


def test_a_scrape_s_location_and_retention_translate_into_native_options() -> None:
    body = ScrapeBody.model_validate(
        {
            "url": "https://a.example/",
            "location": {"languages": ["de-DE", "en"]},
            "zeroDataRetention": True,
        }
    )
    native = scrape_request(body)
    located = LOCATION.of(native.options)
    assert located is not None and located.languages == ["de-DE", "en"]
    assert ZERO_DATA_RETENTION.asked(native)
    assert native.options.cache_store is False  # a result not kept is not cached either
    assert not OPTIONS.keeps_result(native)
    assert OPTIONS.keeps_result(
        scrape_request(
            ScrapeBody.model_validate(
                body.model_dump(by_alias=True, exclude={"zero_data_retention"})
            )
        )
    )


def test_two_families_may_not_share_a_name() -> None:
    class Twin(OptionFamily):
        name = "location"

    with pytest.raises(ValueError, match="share a name"):
        OptionRegistry((*OPTIONS.families, Twin()))


async def test_a_country_is_refused_and_languages_are_kept_with_the_job() -> None:
    store = MemoryJobStore()
    async with memory_client(store, DispatcherSettings(auth_mode="none")) as client:
        country = await client.post(
            "/v2/batch/scrape",
            json={"urls": ["https://a.example/"], "location": {"country": "US"}},
        )
        assert country.status_code == 400, country.text
        assert country.json()["field"] == "location.country"
        languages = await client.post(
            "/v1/jobs",
            json={"url": "https://a.example/", "options": {"location": {"languages": ["it"]}}},
        )
        assert languages.status_code == 202, languages.text
    [job] = store.jobs.values()
    assert LOCATION.of(job.spec.options) is not None


async def _refusals(client: Any, path: str, body: dict[str, Any]) -> dict[str, Any]:
    answer = await client.post(path, json=body)
    assert answer.status_code in (400, 422), answer.text
    found: dict[str, Any] = answer.json()
    return found.get("error") if isinstance(found.get("error"), dict) else found  # type: ignore[return-value]


async def test_a_deployment_that_keeps_every_result_refuses_zero_data_retention() -> None:
    store = MemoryJobStore()
    settings = DispatcherSettings(auth_mode="none", zero_data_retention=False)
    async with memory_client(store, settings) as client:
        native = await _refusals(
            client, "/v1/scrape", {"url": "https://a.example/", "zero_data_retention": True}
        )
        assert native["field"] == "zero_data_retention"
        assert "SCRAPEJOBS_ZERO_DATA_RETENTION" in native["message"]
        v2 = await _refusals(
            client, "/v2/scrape", {"url": "https://a.example/", "zeroDataRetention": True}
        )
        assert v2["field"] == "zeroDataRetention"
        assert "SCRAPEJOBS_ZERO_DATA_RETENTION" in v2["error"]
    assert not store.jobs


async def test_a_result_that_is_not_kept_may_not_be_kept_for_reuse() -> None:
    store = MemoryJobStore()
    async with memory_client(store, DispatcherSettings(auth_mode="none")) as client:
        refused = await _refusals(
            client,
            "/v1/scrape",
            {
                "url": "https://a.example/",
                "zero_data_retention": True,
                "options": {"cache_store": True},
            },
        )
        assert refused["field"] == "options.cache_store"
    assert not store.jobs


def test_remove_base64_images_false_asks_the_markdown_for_its_images() -> None:
    def formats(**given: Any) -> list[Any]:
        body = ScrapeBody.model_validate({"url": "https://a.example/", **given})
        return scrape_request(body).options.formats

    assert formats() == ["metadata", "markdown"]
    assert formats(removeBase64Images=True) == ["metadata", "markdown"]  # old SDKs send it
    [_, markdown] = formats(removeBase64Images=False)
    assert markdown.type == "markdown" and markdown.images == "all"
    assert formats(removeBase64Images=False, formats=["links"]) == ["metadata", "links"]


def test_an_upload_to_read_refuses_what_changes_only_a_fetch_and_takes_the_rest() -> None:
    from scrapejobs_dispatcher.firecrawl.parse_routes import parse_request
    from scrapejobs_shared.options import InvalidOption

    with pytest.raises(InvalidOption, match="an upload is not fetched: leave location out"):
        parse_request({"location": {"languages": ["de"]}})
    [_, markdown] = parse_request({"removeBase64Images": False}).options.formats
    assert markdown.type == "markdown" and markdown.images == "all"
