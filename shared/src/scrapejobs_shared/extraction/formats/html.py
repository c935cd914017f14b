"""The ``html`` format: the decoded document as received (not re-serialised); Firecrawl's
``rawHtml``."""

from __future__ import annotations

from .page_format import MARKUP, FormatOptions, Page, PageFormat, Produced


class Html(PageFormat):
    name = "html"
    firecrawl = "rawHtml"
    reads = MARKUP
    description = "the page as served"

    def produce(self, page: Page, options: FormatOptions | None) -> Produced:
        return Produced(page.decode())
