"""The main content of each kind of page (support/content_pages.py), read from the markdown a
job gets by default: every word of the content kept, no word of the chrome, comments, related
lists, recommendations, filters or pagination; the structure (headings, lists, tables, code,
links) kept. And the content options: the whole page when main content is off, ``include``
and ``exclude`` selectors."""

from __future__ import annotations

import re

import pytest

from scrapejobs_shared.extraction import extract_page
from scrapejobs_shared.extraction.content_scope import ContentScope
from support.content_pages import PAGES, words


def _markdown(kind: str, scope: ContentScope | None = None) -> str:
    url = f"https://site.test/kinds/{kind}"
    extraction = extract_page(
        PAGES[kind].encode(),
        content_type="text/html",
        url=url,
        formats=["markdown"],
        **({"content": scope} if scope else {}),
    )
    markdown = extraction.data["markdown"]
    assert isinstance(markdown, str), extraction.errors
    return markdown


@pytest.mark.parametrize("kind", sorted(PAGES))
def test_each_kind_keeps_its_content_and_drops_its_boilerplate(kind: str) -> None:
    markdown = _markdown(kind)
    assert {w for w in words(PAGES[kind], "KEEP") if w not in markdown} == set(), markdown
    assert {w for w in words(PAGES[kind], "DROP") if w in markdown} == set(), markdown


def test_an_article_keeps_its_structure() -> None:
    markdown = _markdown("article")
    # The headline heads it, with its byline and date (the benchmarks' answers leave them out).
    assert markdown.startswith(
        "# How rivers carve canyons\n\nBy Ana Lima, 12 March 2026\n\nKEEPLEAD"
    )
    assert "## KEEPH2 Three forces at work" in markdown
    assert "- KEEPLIST1 abrasion by the load" in markdown
    assert "[KEEPLINK Grand Canyon](https://site.test/grand-canyon)" in markdown
    assert re.search(r"\| KEEPTH Canyon \| Depth +\|", markdown)


def test_a_docs_page_keeps_its_code_and_table() -> None:
    markdown = _markdown("docs")
    assert "```python\nclient = Client(retries=KEEPCODE5)\nclient.get('/items')\n```" in markdown
    assert re.search(r"\| KEEPTD retries \| 3 +\|", markdown)


def test_a_forum_thread_keeps_every_reply_and_a_listing_every_item() -> None:
    forum = _markdown("forum")
    assert forum.index("KEEPQUESTION") < forum.index("KEEPREPLY1") < forum.index("KEEPREPLY2")
    listing = _markdown("listing")
    for n in range(1, 5):
        assert f"KEEPITEM{n}" in listing and f"KEEPDESC{n}" in listing


def test_main_content_off_gives_the_whole_page() -> None:
    markdown = _markdown("article", ContentScope(main_only=False))
    for word in ("DROPNAV", "DROPRELATED", "DROPCOMMENT", "DROPSIDEBAR", "DROPFOOTER"):
        assert word in markdown
    assert "DROPSCRIPT" not in markdown and "DROPSTYLE" not in markdown  # never text


def test_include_and_exclude_selectors() -> None:
    only_comments = _markdown("article", ContentScope(include=("#comments",)))
    assert "DROPCOMMENT" in only_comments and "KEEPLEAD" not in only_comments
    without_table = _markdown("article", ContentScope(exclude=("table", "ul")))
    assert "KEEPTH" not in without_table and "KEEPLIST1" not in without_table
    assert "KEEPLEAD" in without_table and "DROPNAV" not in without_table
    whole_but_nav = _markdown("article", ContentScope(main_only=False, exclude=("nav",)))
    assert "DROPNAV" not in whole_but_nav and "DROPFOOTER" in whole_but_nav


def test_a_control_character_beside_removed_boilerplate_is_no_failure() -> None:
    """lxml's parser keeps a vertical tab that lxml refuses to set back: the text that follows
    a removed element moves to its neighbour without it."""
    page = (
        b"<html><body><main><h1>Title</h1><p>First paragraph of the story, long enough to"
        b" count as prose for the main content.</p><div class='share'>Share</div>\x0bAfter"
        b" the share bar<p>Second paragraph, also long enough to be read as prose.</p>"
        b"</main></body></html>"
    )
    extraction = extract_page(
        page, content_type="text/html", url="https://e.test/", formats=["markdown"]
    )
    markdown = extraction.data["markdown"]
    assert isinstance(markdown, str) and "After the share bar" in markdown
    assert "Share\n" not in markdown and "\x0b" not in markdown
