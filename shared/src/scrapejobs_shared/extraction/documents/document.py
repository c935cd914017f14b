"""What reading a document gives: its markdown, its pages, its metadata."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from pydantic import JsonValue

from ..content_kind import UnsupportedContent

if TYPE_CHECKING:
    from .ocr import OcrRequest

PAGE_MARKER = "\n\n---\n\n<!-- page {number} -->\n\n"  # Firecrawl's, between pages
DEFAULT_MAX_PAGES = 2000  # pages read of a document when the job sets no limit
# a document not read is answered as base64 in each format carrying it: their bytes together
# at most this, so that the result stays whole under its size limit (result_size.py)
UNREAD_MAX_BYTES = 600_000


class DocumentUnreadable(UnsupportedContent):
    """The document cannot be read (password-protected, broken): the reason says which."""


@dataclass(frozen=True, slots=True)
class DocumentOptions:
    """How to read a document: at most ``max_pages`` pages (the first ones), pages joined by
    page markers when ``page_markers``; ``read`` false: not read at all (its bytes answered as
    they are, Firecrawl's ``parsers: []``); ``kinds``: the kinds of document read (names of
    document_types.py; None: every kind), another kind is refused; ``ocr``: how pages are
    read by OCR (ocr.py; None: the default, ``auto``)."""

    max_pages: int = DEFAULT_MAX_PAGES
    page_markers: bool = False
    read: bool = True
    kinds: frozenset[str] | None = None
    ocr: OcrRequest | None = None


@dataclass(frozen=True, slots=True)
class DocumentPage:
    number: int  # from 1
    markdown: str
    text: str  # as read, line by line
    links: tuple[str, ...] = ()  # where it links, as written (absolute or not)


@dataclass(frozen=True, slots=True)
class Document:
    """A document read: ``pages`` those read (``page_count`` the file's), ``metadata`` what
    the file says of itself (title, author, dates...) and its page count."""

    pages: tuple[DocumentPage, ...]
    page_count: int
    metadata: dict[str, JsonValue] = field(default_factory=dict)
    page_markers: bool = False
    ocr_pages: int = 0  # pages read by OCR
    notes: tuple[str, ...] = ()  # what the reader says of what it left (pages past OCR's limit)

    @property
    def markdown(self) -> str:
        """The pages' markdown, joined by a blank line or by page markers."""
        if not self.page_markers:
            return "\n\n".join(p.markdown for p in self.pages if p.markdown)
        return "".join(
            PAGE_MARKER.format(number=p.number) + p.markdown if n else p.markdown
            for n, p in enumerate(self.pages)
        )

    @property
    def text(self) -> str:
        """The pages' text, a blank line between pages."""
        return "\n\n".join(p.text for p in self.pages if p.text)

    @property
    def links(self) -> list[str]:
        """Where its pages link, in order, as written."""
        return [link for page in self.pages for link in page.links]

    @property
    def truncated(self) -> bool:
        """Whether pages past the limit were left unread."""
        return len(self.pages) < self.page_count
