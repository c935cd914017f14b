"""``options.content`` and ``clean_html``: which part of a page markdown and clean_html give
(main content by default, all of it, only what selectors include, without what they exclude)."""

from __future__ import annotations

from typing import Any

import pytest
from test_markdown_format import PAGE

from scrapejobs_shared.domain.jobspec import JobRequest
from scrapejobs_shared.extraction import ContentScope, extract_page
from scrapejobs_shared.options.content import ContentOptions


def extracted(name: str, scope: ContentScope = ContentScope()) -> str:
    page = extract_page(
        PAGE,
        content_type="text/html; charset=utf-8",
        url="https://mw.example/eiger",
        formats=[name],  # type: ignore[list-item]
        content=scope,
    )
    assert not page.errors, page.errors
    value = page.data[name]
    assert isinstance(value, str)
    return value


def test_clean_html_keeps_the_article_without_scripts_styles_or_chrome() -> None:
    html = extracted("clean_html")
    assert "<h1>Climbing the Eiger</h1>" in html and "<table>" in html
    for gone in ("SCRIPT-TEXT", "color: red", "NAV-NEWS", "SIDEBAR-POPULAR", "FORM-SUBSCRIBE"):
        assert gone not in html
    assert "FOOTER-COPYRIGHT" not in html and "We use cookies" not in html
    assert "<title>" not in html  # the head is not content
    # links absolute against the document's base URL
    assert 'href="https://mw.example/articles/eiger-guide"' in html
    assert 'src="https://mw.example/pics/face.jpg"' in html


def test_the_whole_page_keeps_its_chrome_but_never_its_scripts() -> None:
    whole = ContentScope(main_only=False)
    html = extracted("clean_html", whole)
    assert "NAV-NEWS" in html and "FOOTER-COPYRIGHT" in html and "SIDEBAR-POPULAR" in html
    assert "SCRIPT-TEXT" not in html and "color: red" not in html
    markdown = extracted("markdown", whole)
    assert "NAV-NEWS" in markdown and "FOOTER-COPYRIGHT" in markdown
    assert "# Climbing the Eiger" in markdown
    assert "NAV-NEWS" not in extracted("markdown")  # the default: main content


def test_include_keeps_only_what_the_selectors_match_in_document_order() -> None:
    scope = ContentScope(include=("table", "h1", "article"))  # the article holds both
    html = extracted("clean_html", scope)
    assert html.startswith("<article>") and html.count("<table>") == 1
    scope = ContentScope(include=("table", "h2"))
    html = extracted("clean_html", scope)
    assert html.index("What to bring") < html.index("Heckmair")  # document order
    assert "north face" not in html
    markdown = extracted("markdown", scope)
    assert "What to bring" in markdown and "Heckmair" in markdown
    assert "north face" not in markdown


def test_exclude_leaves_out_what_the_selectors_match_keeping_the_text_around() -> None:
    scope = ContentScope(exclude=("table", "strong"))
    html = extracted("clean_html", scope)
    assert "Heckmair" not in html and "north face" not in html
    assert "The  is one of the great challenges" in html  # the text after it stays
    assert "Heckmair" not in extracted("markdown", scope)


def test_the_page_given_is_left_as_it_was_for_the_other_formats() -> None:
    page = extract_page(
        PAGE,
        content_type="text/html",
        url="https://mw.example/eiger",
        formats=["clean_html", "links", "text"],
        content=ContentScope(exclude=("a",)),
    )
    assert "https://mw.example/news" in page.data["links"]  # type: ignore[operator]
    assert "NAV-NEWS" in page.data["text"]  # type: ignore[operator]


@pytest.mark.parametrize(
    ("content", "field"),
    [
        ({"include": ["p::text"]}, "include"),
        ({"exclude": ["[unclosed"]}, "exclude"),
        ({"main_only": "yes"}, "main_only"),
        ({"only": ["p"]}, "only"),
    ],
)
def test_invalid_content_options_are_refused_naming_the_field(
    content: dict[str, Any], field: str
) -> None:
    body = {"url": "https://a.example/", "options": {"content": content}}
    with pytest.raises(ValueError, match=field):
        JobRequest.model_validate(body)


def test_content_options_give_their_scope() -> None:
    options = ContentOptions(main_only=False, include=["main"], exclude=[".ad"])
    assert options.scope() == ContentScope(False, ("main",), (".ad",))
    assert not ContentOptions().scope().narrowed
