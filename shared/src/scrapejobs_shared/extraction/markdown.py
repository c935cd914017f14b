"""Markup as markdown, for people and language models: html-to-markdown's converter (Rust).

Headings, paragraphs, lists, links (made absolute against the document's base URL), tables,
emphasis and code are kept; images are left out. What part of a page is converted is the
content scope's choice (:mod:`.content_scope`, :mod:`.main_content`): the converter's own
preprocessing is off (its "aggressive" preset drops forms, which some forums wrap their thread
in, and chose chrome by rules the main-content stage measures better: bench/README.md,
"Main content").
"""

from __future__ import annotations

import html_to_markdown

from scrapejobs_shared.errors import WorkFailed


class MarkdownUnavailable(WorkFailed, ValueError):
    """The converter refused the document (its message says why)."""


def page_markdown(html: str, base_url: str) -> str:
    """``html`` as markdown, links resolved against ``base_url``. ``MarkdownUnavailable`` when
    the converter refuses the document."""
    options = html_to_markdown.ConversionOptions(
        preprocessing=html_to_markdown.PreprocessingOptions(enabled=False),
        base_url=base_url,
        skip_images=True,
        extract_metadata=False,
    )
    try:
        converted = html_to_markdown.convert(html, options).content
    except html_to_markdown.ConversionError as exc:
        raise MarkdownUnavailable(f"markdown conversion failed: {exc}") from None
    return (converted or "").strip()
