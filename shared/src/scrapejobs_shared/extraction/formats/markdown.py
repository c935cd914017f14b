"""The ``markdown`` format: the page's main content as markdown (:mod:`..markdown`); a text
body as it is (text is markdown), a CSV one as a table; a document's pages
(:mod:`..documents`). Asked as ``{"type": "markdown", "images": "linked"}``, the page's images
are kept (``linked``: an image written into the page as a ``data:`` URI as Firecrawl's
placeholder; ``all``: whole)."""

from __future__ import annotations

from typing import Literal

from pydantic import Field

from ..content_kind import ContentKind
from ..content_scope import scoped_markup
from ..documents.tables import csv_markdown
from ..markdown import Images, MarkdownUnavailable, page_markdown
from .page_format import FormatOptions, FormatUnavailable, Page, PageFormat, Produced

CSV_TYPES = frozenset({"text/csv", "application/csv", "text/tab-separated-values"})


class MarkdownOptions(FormatOptions):
    """``{"type": "markdown", "images": "linked"}``"""

    type: Literal["markdown"]
    images: Images = Field(
        default="none",
        description="none: images left out; linked: kept as ![alt](url), one written into the "
        "page (a data: URI) as ![alt](<Base64-Image-Removed>); all: those kept whole too",
    )


class Markdown(PageFormat):
    name = "markdown"
    firecrawl = "markdown"
    options = MarkdownOptions
    by_name = True
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
            images = options.images if isinstance(options, MarkdownOptions) else "none"
            return Produced(page_markdown(markup, page.base_url(), images))
        except MarkdownUnavailable as exc:
            raise FormatUnavailable(str(exc)) from None
