"""A document page given as HTML (what a Word or EPUB reader makes) as markdown and text, by
the same conversion as web pages' markdown (the whole of it: a document has no boilerplate)."""

from __future__ import annotations

import lxml.html  # type: ignore[import-untyped]
from lxml import etree

from ..markdown import MarkdownUnavailable, page_markdown
from ..visible_text import page_text
from .document import DocumentPage, DocumentUnreadable


def html_page(number: int, html: str, label: str) -> DocumentPage:
    """Page ``number`` of a document, from its ``html``."""
    try:
        markdown = page_markdown(html, "")
    except MarkdownUnavailable as exc:
        raise DocumentUnreadable(f"the {label} file cannot be read: {exc}") from None
    try:
        # as bytes: an XHTML page's XML declaration is refused in a str
        text = page_text(lxml.html.document_fromstring(html.encode())) if html.strip() else ""
    except (etree.ParserError, ValueError):
        text = ""
    return DocumentPage(number, markdown, text)
