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
from urllib.parse import urlsplit

DISCUSSION_TYPES = re.compile(r"DiscussionForumPosting|QAPage")
PRODUCT_TYPES = re.compile(r"\"@type\"\s*:\s*\"Product\"|schema\.org/Product$|^product")
DISCUSSION_PATHS = re.compile(
    r"/(?:forums?|threads?|topics?|t|discussions?|questions?|boards?|community|comments)/"
    r"|showthread|viewtopic|showtopic|viewthread",
    re.IGNORECASE,
)


class PageKind(enum.Enum):
    DISCUSSION = "discussion"
    PRODUCT = "product"
    OTHER = "other"


def page_kind(declarations: list[str], url: str) -> PageKind:
    """The kind of a page found at ``url`` that declares itself ``declarations`` (its JSON-LD
    scripts, microdata and RDFa types, and Open Graph type: :mod:`.declared` reads them)."""
    if DISCUSSION_PATHS.search(urlsplit(url).path if url else ""):
        return PageKind.DISCUSSION
    if any(DISCUSSION_TYPES.search(d) for d in declarations):
        return PageKind.DISCUSSION
    if any(PRODUCT_TYPES.search(d) for d in declarations):
        return PageKind.PRODUCT
    return PageKind.OTHER
