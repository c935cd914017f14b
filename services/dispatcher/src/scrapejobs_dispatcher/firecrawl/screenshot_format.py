"""Firecrawl's screenshot format, as its SDKs send it; translated to the native screenshot
format (translation.py). Its browser actions are the render option family's
(scrapejobs_shared/options/render)."""

from __future__ import annotations

from typing import Annotated, Literal

from pydantic import Field

from scrapejobs_shared.extraction.field_types import JSON_INT
from scrapejobs_shared.options.camel_model import CamelModel
from scrapejobs_shared.options.render.viewport import Viewport


class ScreenshotFormat(CamelModel):
    """``{"type": "screenshot", "fullPage", "quality", "viewport"}``: the page rendered and
    captured (a JPEG at ``quality``, else a PNG); ``Document.screenshot`` its URL."""

    type: Literal["screenshot"]
    full_page: bool | None = None
    quality: Annotated[int, Field(ge=1, le=100), JSON_INT] | None = None
    viewport: Viewport | None = None  # the page's size (render.viewport)
