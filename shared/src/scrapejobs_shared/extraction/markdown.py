"""Markup as markdown, for people and language models: html-to-markdown's converter (Rust).

Headings, paragraphs, lists, links (made absolute against the document's base URL), tables,
emphasis and code are kept; images are left out unless asked for (``images``: ``linked`` keeps
them as ``![alt](url)``, an image written into the page as a ``data:`` URI replaced by
Firecrawl's placeholder, ``all`` keeps those whole). What part of a page is converted is the
content scope's choice (:mod:`.content_scope`, :mod:`.main_content`): the converter's own
preprocessing is off (its "aggressive" preset drops forms, which some forums wrap their thread
in, and chose chrome by rules the main-content stage measures better: bench/README.md,
"Main content").
"""

from __future__ import annotations

import re
from typing import Literal

import html_to_markdown

from scrapejobs_shared.errors import WorkFailed

Images = Literal["none", "linked", "all"]
BASE64_REMOVED = "<Base64-Image-Removed>"  # Firecrawl's placeholder, its alt text kept
# the target of an image written into the page: ](data:...) (no ")" or space in a data: URI's
# base64). The closing ")" is optional so that a match always consumes its run: a line of many
# "](data:" with no ")" is scanned once, not once from each
_DATA_TARGET = re.compile(r"\]\(data:[^)\s]*(\)?)")


class MarkdownUnavailable(WorkFailed, ValueError):
    """The converter refused the document (its message says why)."""


def page_markdown(html: str, base_url: str, images: Images = "none") -> str:
    """``html`` as markdown, links resolved against ``base_url``, with its ``images`` (none,
    linked: ``data:`` ones as Firecrawl's placeholder, or all). ``MarkdownUnavailable`` when
    the converter refuses the document."""
    options = html_to_markdown.ConversionOptions(
        preprocessing=html_to_markdown.PreprocessingOptions(enabled=False),
        base_url=base_url,
        skip_images=images == "none",
        extract_metadata=False,
    )
    try:
        converted = html_to_markdown.convert(html, options).content
    except html_to_markdown.ConversionError as exc:
        raise MarkdownUnavailable(f"markdown conversion failed: {exc}") from None
    markdown = (converted or "").strip()
    if images == "linked":
        markdown = placeholders_for_written_in(markdown)
    return markdown


def placeholders_for_written_in(markdown: str) -> str:
    """``markdown`` with each image written into the page, ``![alt](data:...)``, as
    ``![alt](<Base64-Image-Removed>)``. Linear in the markdown whatever it holds: each match
    looks back for its ``![`` only as far as the previous match or the line's start."""
    parts: list[str] = []
    kept = scanned = 0  # written out up to; looked at up to
    for found in _DATA_TARGET.finditer(markdown):
        start = found.start()
        floor = max(scanned, markdown.rfind("\n", scanned, start) + 1)
        scanned = found.end()
        opener = markdown.rfind("![", floor, start)
        if not found.group(1) or opener < 0 or "]" in markdown[opener + 2 : start]:
            continue  # not an image's target: a link's, or no closing ")"
        parts += (markdown[kept:start], f"]({BASE64_REMOVED})")
        kept = found.end()
    parts.append(markdown[kept:])
    return "".join(parts)
