"""The format registry: one module per format, listed once, read by the extractor, the native
request model, Firecrawl's request model and its Document. The two formats added through it:
``attributes`` (read from the page) and ``summary`` (answered by an ``ai`` stage)."""

from __future__ import annotations

import importlib
import pkgutil

import pytest
from pydantic import ValidationError

import scrapejobs_shared.extraction.formats as formats_package
from scrapejobs_shared.domain.jobspec import JobOptions, JobRequest, JobSpec, ScrapeRequest
from scrapejobs_shared.extraction import extract_page
from scrapejobs_shared.extraction.formats import FORMATS, PageFormat
from scrapejobs_shared.extraction.formats.attributes import MAX_VALUES, AttributesOptions
from scrapejobs_shared.extraction.formats.screenshot import ScreenshotOptions
from scrapejobs_shared.extraction.formats.summary import PROMPT

PAGE = b"""<html lang="fr"><body>
<nav><a href="/a">A</a><a href="https://x.example/b" data-id="7">B</a><a>no href</a></nav>
<p data-id="8">text</p>
</body></html>"""
ATTRIBUTES = {
    "type": "attributes",
    "selectors": [
        {"selector": "nav a", "attribute": "href"},
        {"selector": "[data-id]", "attribute": "data-id"},
        {"selector": "html", "attribute": "lang"},
        {"selector": "table", "attribute": "id"},
    ],
}


def _options(*formats: object) -> JobOptions:
    return JobOptions.model_validate({"formats": list(formats)})


def test_every_module_of_the_package_declares_a_format_the_registry_lists() -> None:
    declared = set()
    for module in pkgutil.iter_modules(formats_package.__path__):
        loaded = importlib.import_module(f"{formats_package.__name__}.{module.name}")
        declared |= {
            value.name
            for value in vars(loaded).values()
            if isinstance(value, type)
            and issubclass(value, PageFormat)
            and getattr(value, "name", None)
            and value.__module__ == loaded.__name__
        }
    assert declared == {f.name for f in FORMATS}
    assert len({f.firecrawl for f in FORMATS if f.firecrawl}) == sum(
        1 for f in FORMATS if f.firecrawl
    )


def test_the_attributes_format_reads_every_match_as_written() -> None:
    page = extract_page(
        PAGE,
        content_type="text/html",
        url="https://s.example/p",
        formats=_options(ATTRIBUTES).formats,
    )
    assert page.errors == {}
    assert page.data["attributes"] == [
        {"selector": "nav a", "attribute": "href", "values": ["/a", "https://x.example/b"]},
        {"selector": "[data-id]", "attribute": "data-id", "values": ["7", "8"]},
        {"selector": "html", "attribute": "lang", "values": ["fr"]},
        {"selector": "table", "attribute": "id", "values": []},
    ]


def test_attributes_of_a_page_that_is_not_html_is_an_error_of_that_format() -> None:
    page = extract_page(
        b'{"a": 1}', content_type="application/json", url="https://s.example/j",
        formats=_options(ATTRIBUTES, "text").formats,
    )  # fmt: skip
    assert page.errors == {"attributes": "content is JSON, not HTML"}
    assert page.data["text"] == '{"a": 1}'


def test_a_long_list_of_values_is_cut_and_says_so() -> None:
    body = b"<ul>" + b"<li id='x'></li>" * (MAX_VALUES + 5) + b"</ul>"
    wanted = {"type": "attributes", "selectors": [{"selector": "li", "attribute": "id"}]}
    page = extract_page(
        body, content_type="text/html", url="https://s.example/", formats=_options(wanted).formats
    )
    [found] = page.data["attributes"]  # type: ignore[misc]
    assert len(found["values"]) == MAX_VALUES  # type: ignore[index, call-overload]
    assert "kept the first" in page.errors["attributes"]


@pytest.mark.parametrize(
    ("wanted", "message"),
    [
        ("attributes", "Input should be"),  # it needs its selectors
        ({"type": "attributes", "selectors": []}, "at least 1 item"),
        (
            {"type": "attributes", "selectors": [{"selector": "a[", "attribute": "x"}]},
            "invalid CSS",
        ),
        ({"type": "attributes", "selectors": [{"selector": "a", "attribute": "a b"}]}, "pattern"),
        ({"type": "attributes", "selectors": [{"selector": "a"}]}, "attribute"),
        ({"type": "attributes", "selectors": [], "more": 1}, "more"),
        ({"type": "screenshot", "quality": 0}, "greater than or equal to 1"),
        ({"type": "screenshot", "fullPage": True}, "fullPage"),  # Firecrawl's name: not ours
        ({"type": "screenshot", "full_page": 1}, "valid boolean"),
        ({"type": "nothing"}, "type"),
        ("pdf", "Input should be"),
    ],
)
def test_formats_the_registry_refuses(wanted: object, message: str) -> None:
    with pytest.raises(ValidationError, match=message):
        _options(wanted)


def test_a_stored_spec_with_attributes_reads_back_the_same() -> None:
    request = JobRequest.model_validate(
        {"url": "https://s.example/", "options": {"formats": ["links", ATTRIBUTES]}}
    )
    spec = JobSpec.from_request(request)
    again = JobSpec.model_validate(spec.to_document())
    assert again.options.formats == request.options.formats
    assert isinstance(again.options.formats[1], AttributesOptions)


def test_the_summary_format_is_an_ai_stage_added_once() -> None:
    request = ScrapeRequest.model_validate(
        {"url": "https://s.example/", "options": {"formats": ["summary"]}}
    )
    [stage] = request.pipeline
    assert stage.name == "ai" and stage.ai.prompt == PROMPT and stage.ai.into == "summary"
    again = JobRequest.model_validate(
        request.job_request().model_dump(mode="json", exclude_none=True)
    )
    assert again.pipeline == request.pipeline  # validated again: not a second stage
    spec = JobSpec.from_request(again)
    assert JobSpec.model_validate(spec.to_document()).pipeline == request.pipeline


def test_the_summary_format_beside_another_ai_stage_is_refused() -> None:
    own = {"ai": {"prompt": "Price?", "schema": {"type": "object"}}}
    with pytest.raises(ValidationError, match="at most one"):
        JobRequest.model_validate(
            {"url": "https://s.example/", "options": {"formats": ["summary"]}, "pipeline": [own]}
        )


def test_the_summary_format_gives_nothing_at_extraction() -> None:
    page = extract_page(
        PAGE, content_type="text/html", url="https://s.example/", formats=["summary", "text"]
    )
    assert page.errors == {} and set(page.data) == {"text"}


def test_the_native_openapi_document_lists_the_registry() -> None:
    schema = JobOptions.model_json_schema()
    listed = str(schema["properties"]["formats"])
    for page_format in FORMATS:
        assert page_format.name in listed
    assert "AttributesOptions" in str(schema["$defs"])


def test_the_registry_names_the_formats_the_browser_makes_and_those_kept_as_files() -> None:
    shot = ScreenshotOptions(type="screenshot", full_page=True)
    asked = ["markdown", shot, "actions", "links"]
    assert [found.name for found in FORMATS.browser_made(asked)] == ["screenshot", "actions"]
    assert [found.name for found in FORMATS.keeping_files(asked)] == ["screenshot"]
    assert FORMATS.browser_made(["markdown", "html"]) == []
    # a job asking for one renders, loading images (the page as a reader sees it)
    options = JobOptions(formats=["markdown", "screenshot"])
    assert options.render is not None and options.render.block == ["media"]
    assert JobOptions(formats=["markdown"]).render is None
