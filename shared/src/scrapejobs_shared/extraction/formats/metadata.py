"""The ``metadata`` format: the page's title, description, language, Open Graph and Dublin Core
tags (:mod:`..metadata`); what a document says of itself (title, author, dates, page count)."""

from __future__ import annotations

from ..content_kind import ContentKind
from ..metadata import page_metadata
from .page_format import FormatOptions, Page, PageFormat, Produced


class Metadata(PageFormat):
    name = "metadata"
    description = "title, description, language, Open Graph and Dublin Core tags"
    reads = frozenset({ContentKind.HTML, ContentKind.DOCUMENT})

    def produce(self, page: Page, options: FormatOptions | None) -> Produced:
        if page.document is not None:
            document = page.document.metadata
            return Produced({**document, "url": page.url, "content_type": page.described})
        media = page.media.essence or None
        return Produced(page_metadata(page.root, page.base_url(), page.url, media))
