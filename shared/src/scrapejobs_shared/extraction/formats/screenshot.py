"""The ``screenshot`` format (Firecrawl's too): the page as the browser showed it once it
settled, a PNG (or a JPEG at ``quality``), of the viewport or of the whole page (``full_page``).
The job renders (a screenshot asks for the browser); the worker keeps the image in the
tenant's file store for the job's retention and the result holds its URL, served by the
dispatcher to the job's tenant only (``GET /v1/jobs/{id}/files/{task}/{name}``)."""

from __future__ import annotations

from collections.abc import Iterable
from typing import Annotated, ClassVar, Literal

from pydantic import Field

from scrapejobs_shared.extraction.browser_result import SCREENSHOT
from scrapejobs_shared.extraction.field_types import JSON_INT

from .page_format import HTML_ONLY, FormatOptions, FormatUnavailable, Page, PageFormat, Produced


class ScreenshotOptions(FormatOptions):
    type: Literal["screenshot"]
    full_page: bool = Field(
        default=False, description="The whole page, not only the viewport (render.viewport)"
    )
    quality: Annotated[int, Field(ge=1, le=100), JSON_INT] | None = Field(
        default=None, description="A JPEG of this quality (1-100); unset: a PNG"
    )


DEFAULT = ScreenshotOptions(type="screenshot")


def screenshot_asked(formats: Iterable[str | FormatOptions]) -> ScreenshotOptions | None:
    """The screenshot a job's formats ask for (by name: the defaults), if any."""
    for choice in formats:
        if isinstance(choice, ScreenshotOptions):
            return choice
        if choice == Screenshot.name:
            return DEFAULT
    return None


class Screenshot(PageFormat):
    name = "screenshot"
    firecrawl = "screenshot"
    options = ScreenshotOptions
    by_name: ClassVar[bool] = True
    needs_browser: ClassVar[bool] = True
    keeps_file: ClassVar[bool] = True
    reads = HTML_ONLY
    reads_described = "a rendered HTML page"
    description = "the URL of the page's screenshot (the job renders)"

    def produce(self, page: Page, options: FormatOptions | None) -> Produced:
        url = page.browser.url_of(SCREENSHOT) if page.browser is not None else None
        if url is None:
            raise FormatUnavailable("no screenshot was taken: the page was not rendered")
        return Produced(url)
