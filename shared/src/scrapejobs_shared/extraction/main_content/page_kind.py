"""What kind of page this is, as far as its comments go.

* A **discussion** (a forum thread, a question and its answers): the replies are the content,
  not comments under it. Told by what the page says of itself (schema.org's
  ``DiscussionForumPosting`` or ``QAPage``, in microdata or JSON-LD) or by its address
  (``/forum/``, ``/threads/``, ``/topic/``, ``/t/``, ``/questions/``, ``showthread``,
  ``viewtopic``...).
* A **product**: its customers' reviews are comments under it (the product is the content, as
  the public benchmarks' answers read it). Told by schema.org's ``Product`` or Open Graph's
  ``og:type`` ``product``.
"""

from __future__ import annotations

import enum
import re
from typing import Any
from urllib.parse import urlsplit

from lxml import etree  # type: ignore[import-untyped]

DISCUSSION_TYPES = re.compile(r"DiscussionForumPosting|QAPage")
PRODUCT_TYPES = re.compile(r"\"@type\"\s*:\s*\"Product\"|schema\.org/Product$|^product")
DISCUSSION_PATHS = re.compile(
    r"/(?:forums?|threads?|topics?|t|discussions?|questions?|boards?|community|comments)/"
    r"|showthread|viewtopic|showtopic|viewthread",
    re.IGNORECASE,
)
_ITEMTYPES = etree.XPath("//@itemtype", smart_strings=False)


def _declared(doc: Any) -> list[str]:
    """What ``doc`` declares itself: its JSON-LD, microdata types and Open Graph type."""
    said = [str(t) for t in _ITEMTYPES(doc)]
    for element in doc.iter("script", "meta"):
        if element.tag == "script":
            if element.get("type") == "application/ld+json":
                said.append(element.text or "")
        elif element.get("property") == "og:type":
            said.append(element.get("content") or "")
    return [s.strip() for s in said]


class PageKind(enum.Enum):
    DISCUSSION = "discussion"
    PRODUCT = "product"
    OTHER = "other"


def page_kind(doc: Any, url: str) -> PageKind:
    """The kind of ``doc`` (before its scripts are stripped), found at ``url``."""
    if DISCUSSION_PATHS.search(urlsplit(url).path if url else ""):
        return PageKind.DISCUSSION
    declared = _declared(doc)
    if any(DISCUSSION_TYPES.search(d) for d in declared):
        return PageKind.DISCUSSION
    if any(PRODUCT_TYPES.search(d) for d in declared):
        return PageKind.PRODUCT
    return PageKind.OTHER
