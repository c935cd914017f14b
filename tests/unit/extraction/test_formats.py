"""Formats: metadata and Open Graph, links, images, visible text, html; base URL handling."""

from __future__ import annotations

from scrapejobs_shared.extraction import FieldSpec, PageExtraction, extract_page
from scrapejobs_shared.extraction.formats import FormatChoice

ARTICLE_URL = "https://www.news.example/2024/05/story.html"  # final URL, after redirects

ARTICLE = """<!doctype html>
<html lang="en-GB">
<head>
  <meta charset="utf-8">
  <title>
     Big   story &amp; more
  </title>
  <meta name="Description" content="  What happened,
     explained. ">
  <meta property="og:title" content="Big story">
  <meta property="og:image" content="/media/hero.jpg">
  <meta property="og:image" content="/media/second.jpg">
  <meta name="og:url" content="story.html?amp=0">
  <meta property="og:type" content="article">
  <meta name="DC.Title" content="Big  story">
  <meta name="dcterms.created" content="2024-05-01">
  <meta name="dc.title" content="ignored: the first one wins">
  <meta name="keywords" content="news,  story">
  <meta name="robots" content="index, follow">
  <link rel="stylesheet" href="/style.css">
  <link rel="shortcut icon" href="/favicon.ico">
  <link rel="Canonical" href="/2024/05/story">
  <style>body { color: red }</style>
  <script>window.analytics = "hidden";</script>
</head>
<body>
  <header><nav>
    <a href="/">Home</a>
    <a href="HTTPS://WWW.News.Example:443/world/#top">World</a>
    <a href="/world/">World again</a>
    <a href="../../sport/?b=2&a=1">Sport</a>
    <a href="mailto:desk@news.example">Mail</a>
    <a href="javascript:void(0)">JS</a>
    <a href="tel:+441234">Call</a>
    <a href="//cdn.news.example/a b/é">CDN</a>
    <a href="#comments">Comments</a>
    <a>No href</a>
  </nav></header>
  <main>
    <h1>Big story</h1>
    <p>First   paragraph with <b>bold</b> and <a href="/ref">a link</a>.</p>
    <p>Second<br>line</p>
    <noscript>Enable JavaScript</noscript>
    <template><p>template text</p></template>
    <div hidden>hidden div</div>
    <ul><li>one</li><li>two</li></ul>
    <table><tr><th>Name</th><th>Score</th></tr><tr><td>A</td><td>1</td></tr></table>
    <img src="/media/inline.png" alt="x">
    <img src="/media/inline.png" alt="duplicate">
    <img src="data:image/gif;base64,R0lGOD" srcset="/media/lazy-1x.jpg 1x, /media/lazy-2x.jpg 2x">
    <img data-src="/media/lazy.jpg">
    <img src="ftp://files.example/x.png">
    <script type="application/ld+json">{"@type": "NewsArticle"}</script>
  </main>
  <map><area href="/map-area" alt="area"></map>
</body>
</html>
"""


def _extract(
    formats: list[FormatChoice],
    html: str = ARTICLE,
    url: str = ARTICLE_URL,
    fields: dict[str, FieldSpec] | None = None,
) -> PageExtraction:
    return extract_page(
        html.encode(), content_type="text/html", url=url, fields=fields or {}, formats=formats
    )


def test_metadata_and_open_graph():
    result = _extract(["metadata"])
    assert result.errors == {}
    assert result.data == {
        "metadata": {
            "title": "Big story & more",
            "description": "What happened, explained.",
            "canonical": "https://www.news.example/2024/05/story",
            "language": "en-GB",
            "open_graph": {
                "og:title": "Big story",
                "og:image": "https://www.news.example/media/hero.jpg",
                "og:url": "https://www.news.example/2024/05/story.html?amp=0",
                "og:type": "article",
            },
            "dublin_core": {"dc.title": "Big story", "dcterms.created": "2024-05-01"},
            "keywords": "news, story",
            "robots": "index, follow",
            "favicon": "https://www.news.example/favicon.ico",
            "url": ARTICLE_URL,
            "content_type": "text/html",
        }
    }


def test_metadata_of_a_bare_page_and_content_language_meta():
    html = '<meta http-equiv="content-language" content="fr, en"><p>x</p>'
    assert _extract(["metadata"], html=html).data["metadata"] == {
        "title": None,
        "description": None,
        "canonical": None,
        "language": "fr",
        "open_graph": {},
        "dublin_core": {},
        "keywords": None,
        "robots": None,
        "favicon": None,
        "url": ARTICLE_URL,
        "content_type": "text/html",
    }


def test_links_are_absolute_normalised_deduplicated_http_only():
    result = _extract(["links"])
    assert result.data["links"] == [
        "https://www.news.example/",
        "https://www.news.example/world/",
        "https://www.news.example/sport/?b=2&a=1",
        "https://cdn.news.example/a%20b/%C3%A9",
        "https://www.news.example/2024/05/story.html",
        "https://www.news.example/ref",
        "https://www.news.example/map-area",
    ]


def test_base_href_wins_over_the_final_url():
    html = """<head><base href="https://static.example.org/docs/v2/"></head>
      <a href="guide.html">Guide</a><a href="/root">Root</a><img src="img/x.png">"""
    result = _extract(["links", "images"], html=html, url="https://example.org/redirected")
    assert result.data["links"] == [
        "https://static.example.org/docs/v2/guide.html",
        "https://static.example.org/root",
    ]
    assert result.data["images"] == ["https://static.example.org/docs/v2/img/x.png"]


def test_relative_base_href_resolves_against_the_final_url():
    html = '<base href="../assets/"><a href="a.css">x</a>'
    result = _extract(["links"], html=html, url="https://final.example/app/page/")
    assert result.data["links"] == ["https://final.example/app/assets/a.css"]


def test_non_http_base_is_ignored():
    html = '<base href="javascript:alert(1)"><a href="next">x</a>'
    result = _extract(["links"], html=html, url="https://final.example/dir/page")
    assert result.data["links"] == ["https://final.example/dir/next"]


def test_images_src_srcset_lazy_deduplicated():
    assert _extract(["images"]).data["images"] == [
        "https://www.news.example/media/inline.png",
        "https://www.news.example/media/lazy-1x.jpg",
        "https://www.news.example/media/lazy.jpg",
    ]


def test_visible_text_excludes_script_style_and_hidden_content():
    text = _extract(["text"]).data["text"]
    assert isinstance(text, str)
    for invisible in ("analytics", "color: red", "Enable JavaScript", "template text",
                      "hidden div", "NewsArticle", "Big   story &"):  # fmt: skip
        assert invisible not in text
    assert "First paragraph with bold and a link." in text.splitlines()
    assert text.splitlines()[text.splitlines().index("Second") :][:2] == ["Second", "line"]
    assert "one\ntwo" in text
    assert "Name Score\nA 1" in text


def test_html_format_is_the_decoded_document():
    body = '<meta charset="windows-1252"><p>café €</p>'.encode("cp1252")
    result = extract_page(
        body, content_type="text/html", url="https://x.example/", formats=["html"]
    )
    assert result.data["html"] == '<meta charset="windows-1252"><p>café €</p>'
    assert result.charset == "cp1252"


def test_only_requested_formats_are_present_in_request_order():
    result = _extract(["text", "links", "text"])
    assert list(result.data) == ["text", "links"]


def test_field_named_like_a_format_is_replaced_with_an_error():
    result = _extract(["links"], fields={"links": FieldSpec(css="a")})
    assert isinstance(result.data["links"], list)
    assert "rename" in result.errors["links"]


SITEMAP = b"""<?xml version="1.0" encoding="UTF-8"?>
<urlset xmlns="http://www.sitemaps.org/schemas/sitemap/0.9">
  <url><loc> https://shop.example/a </loc><lastmod>2024-01-01</lastmod></url>
  <url><loc>/relative</loc></url>
  <url><loc>https://shop.example/a</loc></url>
  <url><loc>mailto:x@shop.example</loc></url>
</urlset>"""

SITEMAP_INDEX = b"""<?xml version="1.0"?>
<sitemapindex xmlns="http://www.sitemaps.org/schemas/sitemap/0.9">
  <sitemap><loc>https://shop.example/sitemap-1.xml</loc></sitemap>
</sitemapindex>"""

FEEDS = {
    "rss": b"""<rss version="2.0"><channel><link>https://blog.example/</link>
      <item><link>https://blog.example/p1</link></item></channel></rss>""",
    "atom": b"""<feed xmlns="http://www.w3.org/2005/Atom"><link href="https://blog.example/"/>
      <entry><link rel="alternate" href="https://blog.example/p1"/>
      <link rel="edit" href="https://blog.example/edit/p1"/></entry></feed>""",
}


def test_the_links_of_a_sitemap_are_its_locations() -> None:
    url = "https://shop.example/sitemap.xml"
    page = extract_page(SITEMAP, content_type="application/xml", url=url, formats=["links"])
    assert page.data["links"] == ["https://shop.example/a", "https://shop.example/relative"]
    index = extract_page(SITEMAP_INDEX, content_type="text/xml", url=url, formats=["links"])
    assert index.data["links"] == ["https://shop.example/sitemap-1.xml"]
    assert not page.errors and not index.errors


def test_the_links_of_a_feed_are_its_entries() -> None:
    for kind, body in FEEDS.items():
        page = extract_page(
            body, content_type=None, url="https://blog.example/feed", formats=["links"]
        )
        assert page.data["links"] == ["https://blog.example/p1"], kind
