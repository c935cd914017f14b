"""The page formats a job may ask for: one module each, listed once here (the order is the order
the OpenAPI document lists them in). A new format is a module declaring its ``PageFormat`` and one
line below; the extractor, the request models (native and Firecrawl's) and Firecrawl's
``Document`` read this table."""

from __future__ import annotations

from typing import TYPE_CHECKING

from .actions import Actions
from .attributes import Attributes
from .clean_html import CleanHtml
from .html import Html
from .links import Images, Links
from .markdown import Markdown
from .metadata import Metadata
from .page_format import FormatOptions, FormatUnavailable, Page, PageFormat, Produced
from .pages import Pages
from .registry import FormatChoice, FormatRegistry, UnknownFormat, format_name, items_any_of
from .screenshot import Screenshot, ScreenshotOptions
from .summary import Summary
from .text import Text

FORMATS = FormatRegistry(
    Metadata(),
    Links(),
    Images(),
    Text(),
    Markdown(),
    Html(),
    CleanHtml(),
    Attributes(),
    Summary(),
    Pages(),
    Screenshot(),
    Actions(),
)

if TYPE_CHECKING:
    RequestFormat = FormatChoice
else:
    RequestFormat = FORMATS.choice_type()

__all__ = [
    "FORMATS",
    "FormatChoice",
    "FormatOptions",
    "FormatRegistry",
    "FormatUnavailable",
    "Page",
    "PageFormat",
    "Produced",
    "RequestFormat",
    "ScreenshotOptions",
    "UnknownFormat",
    "format_name",
    "items_any_of",
]
