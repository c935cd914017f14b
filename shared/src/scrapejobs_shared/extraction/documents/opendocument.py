"""OpenDocument text (ODT): its ``content.xml`` made HTML (headings at their outline level,
paragraphs, lists, tables, links, line breaks and spaces), then markdown as web pages are; its
``meta.xml`` the metadata. One page. Read here with lxml: the Python library for the format
(odfpy) is barely kept, and the part of the format a text needs is small."""

from __future__ import annotations

import html
from typing import Any

from pydantic import JsonValue

from ..document_types import ODT
from .containers import dublin_core, local, open_package, parse_xml, read_part
from .document import Document, DocumentOptions, DocumentUnreadable
from .markup import html_page

_META = {
    "title": "title",
    "initial-creator": "author",
    "creator": "author",
    "description": "description",
    "subject": "subject",
    "keyword": "keywords",
    "creation-date": "created",
    "date": "modified",
}
_XLINK_HREF = "{http://www.w3.org/1999/xlink}href"
_TEXT = "urn:oasis:names:tc:opendocument:xmlns:text:1.0"
_BODY = "{urn:oasis:names:tc:opendocument:xmlns:office:1.0}text"  # office:body's office:text
MAX_DEPTH = 200  # elements nested deeper are read as their text only


def read_odt(data: bytes, options: DocumentOptions) -> Document:
    package = open_package(data, ODT.label)
    content = read_part(package, "content.xml", ODT.label)
    if content is None:
        raise DocumentUnreadable(f"the {ODT.label} file cannot be read: it has no content.xml")
    body = next(parse_xml(content, ODT.label).iter(_BODY), None)
    markup = "".join(_html(child, 0) for child in body) if body is not None else ""
    metadata: dict[str, JsonValue] = dublin_core(
        read_part(package, "meta.xml", ODT.label), ODT.label, _META
    )
    page = html_page(1, f"<html><body>{markup}</body></html>", ODT.label)
    return Document((page,), 1, metadata | {"page_count": 1}, options.page_markers)


def _html(element: Any, depth: int) -> str:
    """An element of the document's body as HTML (its tail, text after it, included)."""
    tail = html.escape(element.tail or "")
    name = local(element.tag)
    if name in ("s", "tab"):
        count = int(element.get(f"{{{_TEXT}}}c", "1") or 1) if name == "s" else 1
        return (" " * min(count, 100) if name == "s" else "\t") + tail
    if name == "line-break":
        return "<br>" + tail
    if name in ("tracked-changes", "sequence-decls", "annotation", "bookmark-start"):
        return tail
    inner = html.escape(element.text or "")
    if depth < MAX_DEPTH:
        inner += "".join(_html(child, depth + 1) for child in element)
    else:
        inner += html.escape("".join(element.itertext()))
    tag = _TAGS.get(name)
    if name == "h":
        level = min(max(int(element.get(f"{{{_TEXT}}}outline-level", "1") or 1), 1), 6)
        tag = f"h{level}"
    if tag is None:
        return inner + tail
    if name == "a":
        href = html.escape(element.get(_XLINK_HREF, ""), quote=True)
        return f'<a href="{href}">{inner}</a>' + tail
    return f"<{tag}>{inner}</{tag}>" + tail


_TAGS = {
    "p": "p",
    "list": "ul",
    "list-item": "li",
    "table": "table",
    "table-row": "tr",
    "table-cell": "td",
    "a": "a",
    "section": "div",
    "note-body": "div",
}
