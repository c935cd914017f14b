"""The ``links`` format: where a page's hyperlinks (``<a href>``, ``<area href>``) go; of an
XML document, where a sitemap (``<loc>`` of its URLs, or of an index's sitemaps) or a feed
(an RSS item's ``<link>``, an Atom entry's ``<link href>``) points.

Each href is resolved against the document's base URL and normalised (see
:func:`.urls.normalize_http_url`); only http(s) URLs are kept (no ``mailto:``,
``javascript:``, ``tel:``...), de-duplicated, in first-seen document order, at most
:data:`MAX_URLS` of them.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any
from urllib.parse import urlsplit

from lxml import etree  # type: ignore[import-untyped]

from .urls import normalize_http_url, resolve_url

MAX_URLS = 10_000

_HREFS = etree.XPath("//a/@href | //area/@href", smart_strings=False)


def page_links(root: Any, base_url: str) -> tuple[list[str], bool]:
    """The normalised link URLs of a parsed page, and whether :data:`MAX_URLS` cut them."""
    return unique_http_urls(_HREFS(root), base_url)


# namespaces are gone from parsed XML (local names only)
_XML_LINKS = etree.XPath(
    "/urlset/url/loc/text() | /sitemapindex/sitemap/loc/text()"
    " | /rss/channel/item/link/text() | /feed/entry/link[not(@rel) or @rel='alternate']/@href",
    smart_strings=False,
)


def xml_links(root: Any, base_url: str) -> tuple[list[str], bool]:
    """The normalised URLs a sitemap or feed points to, and whether :data:`MAX_URLS` cut
    them."""
    return unique_http_urls((raw.strip() for raw in _XML_LINKS(root)), base_url)


def is_sitemap(url: str) -> bool:
    """Whether a sitemap's location is taken for another sitemap (an index's entries are):
    its path ends in ``.xml``."""
    return urlsplit(url).path.lower().endswith(".xml")


def unique_http_urls(raw_urls: Iterable[str], base_url: str) -> tuple[list[str], bool]:
    """Resolve, normalise and de-duplicate URLs in order; ``True`` when cut at MAX_URLS."""
    seen_raw: set[str] = set()
    urls: dict[str, None] = {}
    for raw in raw_urls:
        if raw in seen_raw:
            continue
        seen_raw.add(raw)
        url = normalize_http_url(resolve_url(base_url, raw))
        if url is None or url in urls:
            continue
        if len(urls) == MAX_URLS:
            return list(urls), True
        urls[url] = None
    return list(urls), False
