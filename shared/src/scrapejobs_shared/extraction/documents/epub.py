"""EPUB books: each chapter of the reading order (the package's spine) a page, its XHTML made
markdown as web pages are; the package's Dublin Core the metadata (title, author, language,
date)."""

from __future__ import annotations

import posixpath
from typing import Any

from pydantic import JsonValue

from ..document_types import EPUB
from .containers import dublin_core, local, open_package, parse_xml, read_part
from .document import Document, DocumentOptions, DocumentUnreadable
from .markup import html_page

_META = {
    "title": "title",
    "creator": "author",
    "description": "description",
    "subject": "keywords",
    "language": "language",
    "date": "created",
    "publisher": "publisher",
}
_XHTML = ("application/xhtml+xml", "text/html")


def read_epub(data: bytes, options: DocumentOptions) -> Document:
    package = open_package(data, EPUB.label)
    root_path = _root_file(read_part(package, "META-INF/container.xml", EPUB.label))
    opf = read_part(package, root_path, EPUB.label)
    if opf is None:
        raise DocumentUnreadable(f"the {EPUB.label} file cannot be read: {root_path} is missing")
    chapters = _reading_order(parse_xml(opf, EPUB.label), posixpath.dirname(root_path))
    pages = []
    for number, path in enumerate(chapters[: options.max_pages], start=1):
        xhtml = read_part(package, path, EPUB.label) or b""
        pages.append(html_page(number, xhtml.decode("utf-8", "replace"), EPUB.label))
    metadata: dict[str, JsonValue] = dublin_core(opf, EPUB.label, _META)
    metadata["page_count"] = len(chapters)
    return Document(tuple(pages), len(chapters), metadata, options.page_markers)


def _root_file(container: bytes | None) -> str:
    """Where the package document is (META-INF/container.xml's rootfile)."""
    if container is not None:
        for element in parse_xml(container, EPUB.label).iter():
            if local(element.tag) == "rootfile" and element.get("full-path"):
                return str(element.get("full-path"))
    raise DocumentUnreadable(f"the {EPUB.label} file cannot be read: it names no package")


def _reading_order(opf: Any, base: str) -> list[str]:
    """The spine's XHTML documents, as paths in the zip."""
    manifest: dict[str, str] = {}
    spine: list[str] = []
    for element in opf.iter():
        name = local(element.tag)
        if name == "item" and element.get("media-type") in _XHTML and element.get("href"):
            manifest[str(element.get("id"))] = posixpath.normpath(
                posixpath.join(base, str(element.get("href")).split("#")[0])
            )
        elif name == "itemref" and element.get("idref"):
            spine.append(str(element.get("idref")))
    return [manifest[ref] for ref in spine if ref in manifest]
