"""Firecrawl's screenshot format and browser actions, as its SDKs send them (camelCase;
``executeJavascript``): translated to the native screenshot format and
``options.render.actions`` (translation.py)."""

from __future__ import annotations

from typing import Annotated, Literal

from pydantic import Discriminator, Field, model_validator

from scrapejobs_shared.domain.browser_actions import MAX_SCRIPT_CHARS, MAX_WAIT_MS, PAPER
from scrapejobs_shared.domain.css_selector import CssSelector
from scrapejobs_shared.domain.field_types import JSON_INT

from .camel_model import CamelModel


class ScreenshotViewport(CamelModel):
    """The browser's size, as the native ``render.viewport`` takes it."""

    width: Annotated[int, Field(ge=320, le=3840), JSON_INT]
    height: Annotated[int, Field(ge=240, le=2160), JSON_INT]


class ScreenshotFormat(CamelModel):
    """``{"type": "screenshot", "fullPage", "quality", "viewport"}``: the page rendered and
    captured (a JPEG at ``quality``, else a PNG); ``Document.screenshot`` its URL."""

    type: Literal["screenshot"]
    full_page: bool | None = None
    quality: Annotated[int, Field(ge=1, le=100), JSON_INT] | None = None
    viewport: ScreenshotViewport | None = None


class FcWait(CamelModel):
    type: Literal["wait"]
    milliseconds: Annotated[int, Field(ge=1, le=MAX_WAIT_MS), JSON_INT] | None = None
    selector: CssSelector | None = None

    @model_validator(mode="after")
    def _one(self) -> FcWait:
        if (self.milliseconds is None) == (self.selector is None):
            raise ValueError("a wait takes milliseconds or a selector, one of them")
        return self


class FcClick(CamelModel):
    type: Literal["click"]
    selector: CssSelector
    all: bool = False


class FcWrite(CamelModel):
    type: Literal["write"]
    text: str = Field(max_length=10_000)


class FcPress(CamelModel):
    type: Literal["press"]
    key: str = Field(min_length=1, max_length=50)


class FcScroll(CamelModel):
    type: Literal["scroll"]
    direction: Literal["up", "down"] = "down"
    selector: CssSelector | None = None


class FcScreenshot(CamelModel):
    type: Literal["screenshot"]
    full_page: bool = False
    quality: Annotated[int, Field(ge=1, le=100), JSON_INT] | None = None
    viewport: ScreenshotViewport | None = None


class FcScrape(CamelModel):
    type: Literal["scrape"]


class FcExecuteJavascript(CamelModel):
    type: Literal["executeJavascript"]
    script: str = Field(min_length=1, max_length=MAX_SCRIPT_CHARS)


class FcPdf(CamelModel):
    type: Literal["pdf"]
    format: PAPER = "Letter"
    landscape: bool = False
    scale: float = Field(default=1.0, ge=0.1, le=2.0)


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
