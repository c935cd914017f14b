"""The ``markdown`` format: a page's main content as markdown, for people and language models.

Headings, paragraphs, lists, links (made absolute against the document's base URL), tables,
emphasis and code are kept; navigation, page headers and footers, sidebars, forms, scripts,
styles, hidden content, images and cookie or consent banners are left out.

The conversion is html-to-markdown's (a Rust converter) with its aggressive preprocessing, which
removes navigation, forms and page chrome, and a few selectors of our own for what it leaves
(consent banners, ARIA landmarks that are not content). Measured against trafilatura and
resiliparse on the same pages (bench/README.md, "Markdown"): it keeps the structure of small
pages too (trafilatura falls back to plain text on them), keeps list items (resiliparse's
plain text drops them), and costs a small fraction of a page's CPU.
"""

from __future__ import annotations

import html_to_markdown

from scrapejobs_shared.errors import WorkFailed

# Page chrome that the preprocessing keeps: banners asking for consent, and the landmark roles
# that mark navigation, the site's banner and footer, and side content.
BOILERPLATE = (
    "[role=navigation]",
    "[role=banner]",
    "[role=contentinfo]",
    "[role=complementary]",
    "[role=dialog]",
    "[aria-hidden=true]",
    "[class*=cookie]",
    "[id*=cookie]",
    "[class*=consent]",
    "[id*=consent]",
)


class MarkdownUnavailable(WorkFailed, ValueError):
    """The converter refused the document (its message says why)."""


def page_markdown(html: str, base_url: str, *, main_only: bool = True) -> str:
    """The main content of ``html`` as markdown (``main_only`` false: all of it); links
    resolved against ``base_url``. ``MarkdownUnavailable`` when the converter refuses the
    document."""
    if main_only:
        options = html_to_markdown.ConversionOptions(
            preprocessing=html_to_markdown.PreprocessingOptions(
                preset="aggressive", remove_navigation=True, remove_forms=True
            ),
            base_url=base_url,
            skip_images=True,
            extract_metadata=False,
            exclude_selectors=list(BOILERPLATE),
        )
    else:
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
