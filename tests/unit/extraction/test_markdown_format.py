"""``formats: ["markdown"]``: the page's main content as markdown."""

from __future__ import annotations

from scrapejobs_shared.extraction.extractor import extract_page

PAGE = b"""<!doctype html><html lang="en"><head><title>Climbing the Eiger | Mountain Weekly</title>
<base href="https://mw.example/articles/"><style>body { color: red }</style>
<script>var tracking = "SCRIPT-TEXT";</script></head><body>
<div class="cookie-banner">We use cookies. <a href="/cookies">Accept</a></div>
<header><a href="/">Mountain Weekly</a><nav><ul><li><a href="/news">NAV-NEWS</a></li>
<li><a href="/about">NAV-ABOUT</a></li></ul></nav></header>
<aside><h3>SIDEBAR-POPULAR</h3><a href="/boots">Ten best boots</a></aside>
<main><article><h1>Climbing the Eiger</h1>
<p>The <strong>north face</strong> is one of the great challenges of the Alps. Read our
<a href="eiger-guide">full guide</a> first.</p>
<h2>What to bring</h2><ul><li>Ice axes</li><li>Crampons</li></ul>
<h3>Routes</h3><table><tr><th>Route</th><th>Grade</th></tr>
<tr><td>Heckmair</td><td>ED2</td></tr></table>
<p>Register with the <a href="https://rescue.example/">rescue service</a>.</p>
<img src="/pics/face.jpg" alt="IMAGE-ALT"></article></main>
<form action="/subscribe"><input name="email"><button>FORM-SUBSCRIBE</button></form>
<footer><p>FOOTER-COPYRIGHT 2026 <a href="/privacy">Privacy</a></p></footer>
</body></html>"""


def markdown_of(body: bytes, content_type: str = "text/html; charset=utf-8") -> str:
    page = extract_page(
        body, content_type=content_type, url="https://mw.example/eiger", formats=["markdown"]
    )
    assert not page.errors, page.errors
    text = page.data["markdown"]
    assert isinstance(text, str)
    return text


def test_the_article_keeps_its_headings_lists_tables_and_links() -> None:
    markdown = markdown_of(PAGE)
    assert markdown.startswith("# Climbing the Eiger")
    assert "\n## What to bring\n" in markdown and "\n### Routes\n" in markdown
    assert "- Ice axes\n- Crampons" in markdown
    assert "| Heckmair | ED2" in markdown
    assert "**north face**" in markdown
    # links are absolute, against the document's base URL
    assert "[full guide](https://mw.example/articles/eiger-guide)" in markdown
    assert "[rescue service](https://rescue.example/)" in markdown


def test_navigation_chrome_scripts_forms_images_and_banners_are_left_out() -> None:
    markdown = markdown_of(PAGE)
    for left_out in (
        "NAV-NEWS",
        "NAV-ABOUT",
        "SIDEBAR-POPULAR",
        "FOOTER-COPYRIGHT",
        "FORM-SUBSCRIBE",
        "SCRIPT-TEXT",
        "color: red",
        "IMAGE-ALT",
        "We use cookies",
    ):
        assert left_out not in markdown, left_out


def test_a_small_page_keeps_its_structure() -> None:
    body = b"<html><body><h1>Product 3</h1><p>$111.99</p><ul><li>tag0</li></ul></body></html>"
    assert markdown_of(body) == "# Product 3\n\n$111.99\n\n- tag0"


def test_plain_text_is_its_own_markdown_and_json_is_not_html() -> None:
    assert markdown_of(b"just text\nlines", "text/plain") == "just text\nlines"
    page = extract_page(
        b'{"a": 1}', content_type="application/json", url="https://x.example/", formats=["markdown"]
    )
    assert page.errors == {"markdown": "content is JSON, not HTML"}
