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
        root = lxml.html.document_fromstring(html.encode()) if html.strip() else None
    except (etree.ParserError, ValueError):
        root = None
    if root is None:
        return DocumentPage(number, markdown, "")
    links = tuple(str(href) for href in _HREFS(root))
    return DocumentPage(number, markdown, page_text(root), links)


_HREFS = etree.XPath("//a/@href", smart_strings=False)
