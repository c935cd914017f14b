"""The ``images`` format: the URLs of a page's ``<img>`` elements.

For each ``<img>``, in document order: its ``src``; when that is missing, empty or a
``data:`` URI, the first candidate of its ``srcset`` (the other candidates are the same
image at other sizes); failing that its ``data-src`` (the usual lazy-loading attribute).
URLs are resolved, normalised, http(s)-only and de-duplicated like ``links``.
``<picture><source>`` candidates and CSS backgrounds are not included.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

from lxml import etree  # type: ignore[import-untyped]

from .links import unique_http_urls

_IMAGES = etree.XPath("//img", smart_strings=False)


def page_images(root: Any, base_url: str) -> tuple[list[str], bool]:
    """The normalised image URLs of a parsed page, and whether they were cut at MAX_URLS."""
    return unique_http_urls(_image_sources(root), base_url)


def _image_sources(root: Any) -> Iterator[str]:
    for image in _IMAGES(root):
        src = (image.get("src") or "").strip()
        if src and not src.lower().startswith("data:"):
            yield src
            continue
        candidate = first_srcset_candidate(image.get("srcset") or "")
        if candidate:
            yield candidate
            continue
        lazy = (image.get("data-src") or "").strip()
        if lazy:
            yield lazy


def first_srcset_candidate(srcset: str) -> str | None:
    """The URL of the first image candidate in a ``srcset`` (WHATWG parsing, first step)."""
    rest = srcset.lstrip(" \t\n\r\f,")
    if not rest:
        return None
    url = rest.split(maxsplit=1)[0].rstrip(",")
    return url or None
