"""Firecrawl's screenshot format and browser actions, as its SDKs send them: the native
actions (domain/browser_actions.py) with camelCase names and the script's type spelt
``executeJavascript``; translated to the native screenshot format and
``options.render.actions`` (translation.py)."""

from __future__ import annotations

from typing import Annotated, Literal

from pydantic import ConfigDict, Discriminator, Field
from pydantic.alias_generators import to_camel

from scrapejobs_shared.domain import browser_actions as native
from scrapejobs_shared.domain.viewport import Viewport
from scrapejobs_shared.extraction.field_types import JSON_INT
from scrapejobs_shared.options.camel_model import CamelModel

# a native action's config (strict, nothing unknown) with Firecrawl's names
CAMEL = ConfigDict(alias_generator=to_camel, populate_by_name=False)


class ScreenshotFormat(CamelModel):
    """``{"type": "screenshot", "fullPage", "quality", "viewport"}``: the page rendered and
    captured (a JPEG at ``quality``, else a PNG); ``Document.screenshot`` its URL."""

    type: Literal["screenshot"]
    full_page: bool | None = None
    quality: Annotated[int, Field(ge=1, le=100), JSON_INT] | None = None
    viewport: Viewport | None = None  # the page's size (render.viewport)


class FcWait(native.Wait):
    model_config = CAMEL


class FcClick(native.Click):
    model_config = CAMEL


class FcWrite(native.Write):
    model_config = CAMEL


class FcPress(native.Press):
    model_config = CAMEL


class FcScroll(native.Scroll):
    model_config = CAMEL


class FcScreenshot(native.Screenshot):
    model_config = CAMEL


class FcScrape(native.Scrape):
    model_config = CAMEL


class FcExecuteJavascript(CamelModel):
    """A script run in the page (native: ``execute_javascript``)."""

    type: Literal["executeJavascript"]
    script: native.ScriptText


class FcPdf(native.Pdf):
    model_config = CAMEL


FcAction = Annotated[
    FcWait
    | FcClick
    | FcWrite
    | FcPress
    | FcScroll
    | FcScreenshot
    | FcScrape
    | FcExecuteJavascript
    | FcPdf,
    Discriminator("type"),
]
