"""The ``metadata`` format: the page's title, description, language, Open Graph and Dublin Core
tags (:mod:`..metadata`)."""

from __future__ import annotations

from ..metadata import page_metadata
from .page_format import FormatOptions, Page, PageFormat, Produced


class Metadata(PageFormat):
    name = "metadata"
    description = "title, description, language, Open Graph and Dublin Core tags"

    def produce(self, page: Page, options: FormatOptions | None) -> Produced:
        media = page.media.essence or None
        return Produced(page_metadata(page.root, page.base_url(), page.url, media))
