"""The ``pages`` format: a document's pages read, each its number and markdown (Firecrawl's
``Document.pages``, asked for there with a parser's ``pages: true``)."""

from __future__ import annotations

from pydantic import JsonValue

from ..content_kind import ContentKind
from .page_format import FormatOptions, Page, PageFormat, Produced


class Pages(PageFormat):
    name = "pages"
    reads = frozenset({ContentKind.DOCUMENT})
    reads_described = "a document (PDF)"
    description = "a document's pages, each {page_number, markdown}"

    def produce(self, page: Page, options: FormatOptions | None) -> Produced:
        assert page.document is not None  # reads documents only
        found: list[JsonValue] = [
            {"page_number": p.number, "markdown": p.markdown} for p in page.document.pages
        ]
        return Produced(found)

    def document(self, value: JsonValue) -> JsonValue:
        if not isinstance(value, list):
            return value
        return [
            {"pageNumber": p.get("page_number"), "markdown": p.get("markdown")}
            for p in value
            if isinstance(p, dict)
        ]
