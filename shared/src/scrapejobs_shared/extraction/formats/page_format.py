"""What a page format is: a name a job asks for, what it reads, and how it is produced.

A format is one module of this package declaring one :class:`PageFormat` (its native name, its
Firecrawl name, the kinds of content it reads, its options' model when it takes options) and
listed once in the registry (``formats/__init__.py``). The extractor hands each requested
format a :class:`Page`: the response parsed once, its decoded text and base URL on first use.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, ClassVar

from pydantic import BaseModel, ConfigDict, JsonValue

from scrapejobs_shared.errors import WorkFailed
from scrapejobs_shared.extraction.browser_result import BrowserResult

from ..content_kind import ContentKind
from ..content_scope import ContentScope
from ..documents import Document
from ..media_type import MediaType

MARKUP = frozenset({ContentKind.HTML, ContentKind.XML})
HTML_ONLY = frozenset({ContentKind.HTML})


class FormatOptions(BaseModel):
    """A format asked for as an object, ``{"type": name, ...options}``: each format taking
    options declares its own model with ``type`` its name."""

    model_config = ConfigDict(extra="forbid", strict=True)

    type: str


class FormatUnavailable(WorkFailed):
    """This page cannot give the format: the message goes to the result's ``errors``."""


@dataclass(frozen=True, slots=True)
class Produced:
    """A format's value, with a note for the result's ``errors`` (a list cut at its limit)."""

    value: JsonValue
    note: str | None = None


@dataclass(slots=True)
class Page:
    """One response as the formats read it: parsed once, the rest computed on first use."""

    kind: ContentKind
    described: str  # "HTML", "JSON", "text/csv": for messages
    url: str  # the final URL, after redirects
    media: MediaType
    scope: ContentScope  # the part of the page markdown and clean_html give
    root: Any | None  # the parsed markup (HTML, XML); None for text and JSON
    decode: Callable[[], str]  # the body as text, as received
    find_base: Callable[[], str] = field(repr=False, default=lambda: "")
    document: Document | None = None  # a document read (PDF...): its kind is DOCUMENT
    browser: BrowserResult | None = None  # what the browser made of it (a screenshot's URL)
    _base: str | None = None

    @property
    def xml(self) -> bool:
        return self.kind is ContentKind.XML

    def base_url(self) -> str:
        """The document's base URL (``<base href>`` resolved against the final URL, else it)."""
        if self._base is None:
            self._base = self.find_base()
        return self._base


class PageFormat(ABC):
    """One format. ``reads``: the kinds of content it is produced from (others get the error
    "content is ..., not HTML"); ``stage``: the ``ai`` stage that answers it instead of the
    extraction (its options as a request gives them), None for formats read from the page."""

    name: ClassVar[str]
    firecrawl: ClassVar[str | None] = None  # its name in Firecrawl's /v2, when it has one
    options: ClassVar[type[FormatOptions] | None] = None  # its object form, when it takes any
    by_name: ClassVar[bool] = False  # asked for by name too, though it takes options
    needs_browser: ClassVar[bool] = False  # made by the browser: a job asking for it renders
    keeps_file: ClassVar[bool] = False  # its answer is a file kept in the file store
    reads: ClassVar[frozenset[ContentKind]] = HTML_ONLY
    reads_described: ClassVar[str] = "HTML"  # what it reads, in "content is X, not HTML"
    stage: ClassVar[dict[str, JsonValue] | None] = None
    description: ClassVar[str]

    @abstractmethod
    def produce(self, page: Page, options: FormatOptions | None) -> Produced:
        """The format of ``page`` (``options``: the object it was asked with, if any)."""

    def document(self, value: JsonValue) -> JsonValue:
        """What Firecrawl's ``Document`` holds under :attr:`firecrawl` for a stored ``value``."""
        return value


class StageFormat(PageFormat):
    """A format the ``stage`` answers on the processing lane: the extraction gives nothing."""

    reads = frozenset()

    def produce(self, page: Page, options: FormatOptions | None) -> Produced:
        raise FormatUnavailable(f"the {self.name} format is answered by its stage")
