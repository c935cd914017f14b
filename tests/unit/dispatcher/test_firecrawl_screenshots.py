"""Firecrawl's screenshot formats, as its SDKs send them, become the native screenshot format
and a rendered job that loads images; ``Document.screenshot`` is the result's URL."""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

import pytest

from scrapejobs_dispatcher.firecrawl.format_translation import native_formats
from scrapejobs_dispatcher.firecrawl.request_models import ScrapeBody
from scrapejobs_dispatcher.firecrawl.translation import job_options
from scrapejobs_shared.domain.records import TaskRecord
from scrapejobs_shared.domain.statuses import TaskStatus
from scrapejobs_shared.extraction.formats import ScreenshotOptions
from scrapejobs_shared.firecrawl.documents import document


def options(*formats: Any) -> ScrapeBody:
    return ScrapeBody.model_validate({"url": "https://a.example/", "formats": list(formats)})


@pytest.mark.parametrize(
    ("wanted", "full_page", "quality"),
    [
        ("screenshot", False, None),
        ("screenshot@fullPage", True, None),
        ({"type": "screenshot"}, False, None),
        ({"type": "screenshot", "fullPage": True, "quality": 80}, True, 80),
    ],
)
def test_each_shape_is_the_native_screenshot(wanted: Any, full_page: bool, quality: Any) -> None:
    body = options("markdown", wanted)
    formats = native_formats(body)
    assert ScreenshotOptions(type="screenshot", full_page=full_page, quality=quality) in formats
    native = job_options(body)
    assert native["render"]["block"] == ["media"]  # images and fonts in the picture


def test_a_viewport_renders_the_page_at_that_size() -> None:
    shot = {"type": "screenshot", "viewport": {"width": 800, "height": 600}}
    assert job_options(options(shot))["render"]["viewport"] == {"width": 800, "height": 600}
    with pytest.raises(ValueError, match="greater than or equal to 320"):
        options({"type": "screenshot", "viewport": {"width": 10, "height": 600}})


def test_without_a_screenshot_nothing_renders_and_the_document_holds_the_url() -> None:
    assert "render" not in job_options(options("markdown"))
    url = "https://api.example/v1/jobs/j/files/t/screenshot.png"
    now = datetime(2026, 11, 29, tzinfo=UTC)
    task = TaskRecord(
        "j", "t", "https://a.example/", TaskStatus.SUCCEEDED, now, now, now,
        http_status=200, data={"screenshot": url, "markdown": "# x"},
    )  # fmt: skip
    assert document(task)["screenshot"] == url
