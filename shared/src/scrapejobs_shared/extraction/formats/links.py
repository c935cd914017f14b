"""The ``links`` and ``images`` formats: where a page's links and images point, absolute and
de-duplicated (:mod:`..links`, :mod:`..images`); of XML, a sitemap's or a feed's URLs; of a
document, where its pages link (a PDF's link annotations and the URLs its text spells out)."""

from __future__ import annotations

import re

from ..content_kind import ContentKind
from ..images import page_images
from ..links import MAX_URLS, page_links, unique_http_urls, xml_links
from .page_format import MARKUP, FormatOptions, Page, PageFormat, Produced

_ABSOLUTE = re.compile(r"^\s*https?://", re.IGNORECASE)


class Links(PageFormat):
    name = "links"
    firecrawl = "links"
    reads = MARKUP | {ContentKind.DOCUMENT}
    description = "where the page links to"

    def produce(self, page: Page, options: FormatOptions | None) -> Produced:
        if page.document is not None:  # a PDF's link annotations and URLs, a Word file's links
            absolute = (link for link in page.document.links if _ABSOLUTE.match(link))
            urls, cut = unique_http_urls(absolute, page.url)  # its own references left out
        elif page.kind is ContentKind.XML:
            urls, cut = xml_links(page.root, page.url)
        else:
            urls, cut = page_links(page.root, page.base_url())
        return _listed(self.name, urls, cut)


class Images(PageFormat):
    name = "images"
    firecrawl = "images"
    description = "the page's images"

    def produce(self, page: Page, options: FormatOptions | None) -> Produced:
        return _listed(self.name, *page_images(page.root, page.base_url()))


def _listed(name: str, urls: list[str], cut: bool) -> Produced:
    note = f"more than {MAX_URLS} {name}; kept the first {MAX_URLS}" if cut else None
    return Produced(list(urls), note)
