"""The ``clean_html`` format: the page without scripts and styles and, by default, its chrome
(:mod:`..content_scope`); Firecrawl's ``html``."""

from __future__ import annotations

from ..content_scope import clean_html
from .page_format import FormatOptions, Page, PageFormat, Produced


class CleanHtml(PageFormat):
    name = "clean_html"
    firecrawl = "html"
    description = "the page without scripts, styles and, by default, page chrome"

    def produce(self, page: Page, options: FormatOptions | None) -> Produced:
        return Produced(clean_html(page.root, page.base_url(), page.scope, page.url))
