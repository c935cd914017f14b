"""Firecrawl's formats as its SDKs send them: a name (``"markdown"``, ``"screenshot@fullPage"``),
a name as an object, or an object with options (``json``, ``changeTracking``, ``screenshot``, and
the registry's formats taking options: extraction/formats)."""

from __future__ import annotations

from typing import TYPE_CHECKING, Annotated, Any, Literal

from pydantic import Field, field_validator

from scrapejobs_shared.extraction.field_types import JSON_INT
from scrapejobs_shared.extraction.formats import FORMATS, FormatOptions
from scrapejobs_shared.options.camel_model import CamelModel
from scrapejobs_shared.options.render.viewport import Viewport


class ScreenshotFormat(CamelModel):
    """``{"type": "screenshot", "fullPage", "quality", "viewport"}``: the page rendered and
    captured (a JPEG at ``quality``, else a PNG); ``Document.screenshot`` its URL."""

    type: Literal["screenshot"]
    full_page: bool | None = None
    quality: Annotated[int, Field(ge=1, le=100), JSON_INT] | None = None
    viewport: Viewport | None = None  # the page's size (render.viewport)


class JsonFormat(CamelModel):
    """``{"type": "json", "schema", "prompt"}``: answered by the ai stage."""

    type: Literal["json"]
    schema_: dict[str, Any] | None = Field(default=None, alias="schema")
    prompt: str | None = Field(default=None, min_length=1, max_length=20_000)


class ChangeTrackingFormat(CamelModel):
    """``{"type": "changeTracking", "modes", "schema", "prompt", "tag"}``: the page compared
    with the previous scrape of its URL by the same team and ``tag`` (its markdown, as a git
    diff; with ``json``, the fields the ai stage extracts, each ``previous`` and ``current``)."""

    type: Literal["changeTracking", "change_tracking"]
    modes: list[Literal["git-diff", "json"]] = Field(default_factory=list, max_length=2)
    schema_: dict[str, Any] | None = Field(default=None, alias="schema")
    prompt: str | None = Field(default=None, min_length=1, max_length=20_000)
    tag: str | None = Field(default=None, min_length=1, max_length=200)


# the formats named alone: the registry's (extraction/formats) and Firecrawl's own
FULL_PAGE_SCREENSHOT = "screenshot@fullPage"
FORMAT_NAMES = (*FORMATS.firecrawl_named(), "raw_html", "changeTracking", FULL_PAGE_SCREENSHOT)
ALIASES = {"raw_html": "rawHtml", "change_tracking": "changeTracking"}


class NamedFormat(CamelModel):
    """A format given as an object with only its name."""

    type: str = Field(json_schema_extra={"enum": list(FORMAT_NAMES)})

    @field_validator("type")
    @classmethod
    def _known(cls, value: str) -> str:
        if value not in FORMAT_NAMES:
            raise ValueError(f"unknown format {value!r}: one of {', '.join(FORMAT_NAMES)}")
        return value


if TYPE_CHECKING:
    FormatOption = (
        str | JsonFormat | ChangeTrackingFormat | ScreenshotFormat | NamedFormat | FormatOptions
    )
else:
    FormatOption = FORMATS.choice_type(
        FORMAT_NAMES, also=(JsonFormat, ChangeTrackingFormat, ScreenshotFormat, NamedFormat)
    )


def markdown_only() -> list[FormatOption]:
    return ["markdown"]
