"""The ``markdown`` format: the page's main content as markdown (:mod:`..markdown`); a text
body as it is (text is markdown), a CSV one as a table; a document's pages
(:mod:`..documents`)."""

from __future__ import annotations

from ..content_kind import ContentKind
from ..content_scope import scoped_markup
from ..documents.tables import csv_markdown
from ..markdown import MarkdownUnavailable, page_markdown
from .page_format import FormatOptions, FormatUnavailable, Page, PageFormat, Produced

CSV_TYPES = frozenset({"text/csv", "application/csv", "text/tab-separated-values"})


class Markdown(PageFormat):
    name = "markdown"
    firecrawl = "markdown"
    reads = frozenset({ContentKind.HTML, ContentKind.TEXT, ContentKind.DOCUMENT})
    description = "the main content"

    def produce(self, page: Page, options: FormatOptions | None) -> Produced:
        if page.document is not None:
            return Produced(page.document.markdown)
        if page.root is None:
            text = page.decode()
            table = csv_markdown(text) if page.media.essence in CSV_TYPES else None
            return Produced(text if table is None else table)
        scope = page.scope
        markup = scoped_markup(page.root, scope, page.url)
        try:
            return Produced(page_markdown(markup, page.base_url()))
        except MarkdownUnavailable as exc:
            raise FormatUnavailable(str(exc)) from None
