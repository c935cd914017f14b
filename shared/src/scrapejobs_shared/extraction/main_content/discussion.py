"""Whether a page is a discussion (a forum thread, a question and its answers), where the
replies are the content, not comments under it.

Told by what the page says of itself (schema.org's ``DiscussionForumPosting``, ``QAPage``,
``Question`` or ``Comment``-bearing ``SocialMediaPosting`` in microdata or JSON-LD) or by its
address (``/forum/``, ``/threads/``, ``/topic/``, ``/t/``, ``/questions/``, ``showthread``,
``viewtopic``...).
"""

from __future__ import annotations

import re
from typing import Any
from urllib.parse import urlsplit

from lxml import etree  # type: ignore[import-untyped]

DISCUSSION_TYPES = re.compile(r"DiscussionForumPosting|QAPage")
DISCUSSION_PATHS = re.compile(
    r"/(?:forums?|threads?|topics?|t|discussions?|questions?|boards?|community|comments)/"
    r"|showthread|viewtopic|showtopic|viewthread",
    re.IGNORECASE,
)
_DECLARED = etree.XPath(
    "//script[@type='application/ld+json']/text() | //*[@itemtype]/@itemtype",
    smart_strings=False,
)


def is_discussion(doc: Any, url: str) -> bool:
    """Whether ``doc`` (before its scripts are stripped), found at ``url``, is a discussion."""
    if DISCUSSION_PATHS.search(urlsplit(url).path if url else ""):
        return True
    return any(DISCUSSION_TYPES.search(declared) for declared in _DECLARED(doc))
