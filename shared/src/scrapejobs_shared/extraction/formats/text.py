"""The ``text`` format: a page's visible text (:mod:`..visible_text`); of XML, one line per text
node; of text and JSON, the body as received; of a document, its pages' text."""

from __future__ import annotations

from ..content_kind import ContentKind
from ..visible_text import page_text, xml_text
from .page_format import FormatOptions, Page, PageFormat, Produced


class Text(PageFormat):
    name = "text"
    reads = frozenset(ContentKind) - {ContentKind.UNSUPPORTED}
    description = "the visible text"

    def produce(self, page: Page, options: FormatOptions | None) -> Produced:
        if page.document is not None:
            return Produced(page.document.text)
        if page.root is None:
            return Produced(page.decode())
        return Produced(xml_text(page.root) if page.xml else page_text(page.root))
