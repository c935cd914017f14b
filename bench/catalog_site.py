"""A deterministic catalog site for the benchmark, served by a small asyncio HTTP/1.1 server.

Run as its own process (so its CPU is not counted in the benchmark process)::

    python bench/catalog_site.py --port 8123 --prerender 1200

Pages (5-15 KB of realistic HTML: head with CSS, nav, breadcrumbs, content, footer, inline
scripts):

* ``/product/{n}``: one product (``0 <= n < --products``): ``h1`` title, ``p.price``,
  ``div#product[data-sku]``, ``ul.tags li.tag``, description, specs, related products, reviews.
* ``/category/{c}/{page}``: a grid of 24 product cards of category ``c``.
* ``/scripted/{n}``: product ``n`` as a script builds it from ``/api/product/{n}`` (JSON): a
  light page for the renderer, whose rendered DOM gives :func:`expected` of ``/product/{n}``.
* ``/healthz``, ``/robots.txt`` (allow all), ``/__stats`` (JSON request/connection counters).

Every page is a pure function of its path (``random.Random(seed)``, never ``hash()``), so the
benchmark process can compute the true extracted values with :func:`expected` without asking
the server. Rendered responses are cached in memory; ``--prerender`` renders the first products
and every category page at start-up so the measured runs only copy bytes.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import json
import random
import re
import signal
import zlib
from html import escape
from typing import Any

PRODUCTS = 20_000
CATEGORIES = 40
CARDS_PER_PAGE = 24
CATEGORY_EVERY = 10  # in a benchmark URL list, every 10th page is a category page

# The extraction the benchmark asks for, in the job API's field-spec form. The bare loop applies
# exactly these selectors with parsel (see bare_loop.py).
TITLE_CSS = "h1::text"
PRICE_CSS = "div.product-info p.price::text"
PRICE_RE = r"(\d+\.\d+)"
SKU_XPATH = "//div[@id='product']/@data-sku"
TAGS_CSS = "ul.tags li.tag::text"
FIELDS: dict[str, dict[str, Any]] = {
    "title": {"css": TITLE_CSS},
    "price": {"css": PRICE_CSS, "re": PRICE_RE, "type": "float"},
    "sku": {"xpath": SKU_XPATH},
    "tags": {"css": TAGS_CSS, "all": True},
}

_ADJECTIVES = (  # noqa: SIM905
    "Rustic Modern Classic Compact Deluxe Vintage Sleek Sturdy Elegant Portable Ergonomic "
    "Handcrafted Minimalist Premium Everyday Nordic Industrial Coastal Urban Heritage"
).split()
_MATERIALS = "Oak Walnut Steel Linen Ceramic Bamboo Leather Marble Cotton Glass Copper".split()  # noqa: SIM905
_NOUNS = (  # noqa: SIM905
    "Side Table|Desk Lamp|Armchair|Bookshelf|Coffee Mug|Throw Blanket|Wall Clock|Planter|"
    "Serving Tray|Floor Rug|Bar Stool|Cutting Board|Pendant Light|Storage Box|Mirror|Vase"
).split("|")
_TAGS = (  # noqa: SIM905
    "new sale bestseller eco handmade limited gift outdoor indoor kitchen living-room bedroom "
    "office kids vintage premium clearance bundle"
).split()
_CATEGORY_NAMES = (  # noqa: SIM905
    "Furniture|Lighting|Kitchen|Textiles|Decor|Storage|Garden|Office|Bath|Kids|Outdoor|Tableware"
).split("|")
_WORDS = (  # noqa: SIM905
    "lorem ipsum dolor sit amet consectetur adipiscing elit sed do eiusmod tempor incididunt ut "
    "labore et dolore magna aliqua enim ad minim veniam quis nostrud exercitation ullamco laboris "
    "nisi aliquip ex ea commodo consequat duis aute irure in reprehenderit voluptate velit esse "
    "cillum fugiat nulla pariatur excepteur sint occaecat cupidatat non proident sunt culpa qui "
    "officia deserunt mollit anim id est laborum durable crafted finish natural sustainable"
).split()

_STYLE = (
    "<style>body{font-family:system-ui,sans-serif;margin:0;color:#222}header,footer{background:"
    "#f4f4f4;padding:1rem}nav ul{display:flex;flex-wrap:wrap;list-style:none;gap:.5rem}"
    ".grid{display:grid;grid-template-columns:repeat(4,1fr);gap:1rem}.card{border:1px solid "
    "#ddd;padding:.5rem}.price{font-weight:700;color:#b00}.tags li{display:inline-block;"
    "background:#eef;margin:2px;padding:2px 6px}table.specs td{padding:2px 8px}"
    ".reviews blockquote{border-left:3px solid #ccc;margin:0;padding-left:1rem}</style>"
)


def category_name(c: int) -> str:
    return f"{_CATEGORY_NAMES[c % len(_CATEGORY_NAMES)]} {c}"


def category_pages(products: int = PRODUCTS) -> int:
    per_category = -(-products // CATEGORIES)
    return max(1, -(-per_category // CARDS_PER_PAGE))


class ProductData:
    """The true values of product ``n`` (what the extraction must return)."""

    __slots__ = ("category", "number", "price", "rng", "sku", "tags", "title")

    def __init__(self, number: int) -> None:
        rng = random.Random(number * 7919 + 17)
        self.number = number
        self.category = number % CATEGORIES
        self.title = (
            f"{rng.choice(_ADJECTIVES)} {rng.choice(_MATERIALS)} {rng.choice(_NOUNS)} {number}"
        )
        self.price = f"{rng.uniform(3, 900):.2f}"
        self.sku = f"SK-{self.category:02d}-{number:06d}"
        self.tags = rng.sample(_TAGS, k=rng.randint(2, 5))
        self.rng = rng  # continues deterministically for the page's filler content


def expected(path: str) -> dict[str, Any]:
    """The extraction :data:`FIELDS` must give for ``path`` (as the job API returns it)."""
    match = _PRODUCT.match(path)
    if match:
        product = ProductData(int(match.group(1)))
        return {
            "title": product.title,
            "price": float(product.price),
            "sku": product.sku,
            "tags": product.tags,
        }
    match = _CATEGORY.match(path)
    if match:
        return {"title": category_name(int(match.group(1))), "price": None, "sku": None, "tags": []}
    match = _SCRIPTED.match(path)
    if match:
        return expected(f"/product/{match.group(1)}")
    raise ValueError(f"no page at {path}")


def scripted_page(number: int) -> str:
    """Product ``number`` built in the browser from ``/api/product/{number}``: the elements
    :data:`FIELDS` reads, none of them in the HTML as served."""
    return (
        "<!DOCTYPE html><html lang='en'><head><meta charset='utf-8'><title>Loading…</title>"
        f"{_STYLE}</head><body><main id='app'>Loading…</main><script>"
        f"fetch('/api/product/{number}').then(r => r.json()).then(p => {{"
        "document.title = p.title; const app = document.getElementById('app');"
        "app.innerHTML = ''; const box = document.createElement('div'); box.id = 'product';"
        "box.dataset.sku = p.sku; const h1 = document.createElement('h1');"
        "h1.textContent = p.title; const info = document.createElement('div');"
        "info.className = 'product-info'; const price = document.createElement('p');"
        "price.className = 'price'; price.textContent = '$' + p.price; info.append(price);"
        "const tags = document.createElement('ul'); tags.className = 'tags';"
        "for (const t of p.tags) { const li = document.createElement('li'); li.className = 'tag';"
        "li.textContent = t; tags.append(li); } box.append(h1, info, tags); app.append(box); });"
        "</script></body></html>"
    )


def product_json(number: int) -> str:
    product = ProductData(number)
    fields = {"title": product.title, "price": product.price, "sku": product.sku}
    return json.dumps({**fields, "tags": product.tags})


def bench_paths(count: int, start: int = 0, products: int = PRODUCTS) -> list[str]:
    """``count`` distinct paths: products from ``start`` on, every 10th a category page."""
    pages = category_pages(products)
    paths = []
    for i in range(count):
        n = start + i
        if i % CATEGORY_EVERY == CATEGORY_EVERY - 1:
            slot = n // CATEGORY_EVERY
            paths.append(f"/category/{slot % CATEGORIES}/{(slot // CATEGORIES) % pages}")
        else:
            paths.append(f"/product/{n % products}")
    return paths


def _words(rng: random.Random, count: int) -> str:
    text = " ".join(rng.choice(_WORDS) for _ in range(count))
    return text[:1].upper() + text[1:] + "."


def _head(title: str, description: str) -> str:
    return (
        "<!DOCTYPE html>\n<html lang='en'><head><meta charset='utf-8'>"
        "<meta name='viewport' content='width=device-width, initial-scale=1'>"
        f"<title>{escape(title)} | Bench Home Store</title>"
        f"<meta name='description' content='{escape(description)}'>"
        "<link rel='stylesheet' href='/static/site.css'><link rel='icon' href='/favicon.ico'>"
        f"{_STYLE}</head>\n"
    )


def _header() -> str:
    links = "".join(
        f"<li><a href='/category/{c}/0'>{escape(category_name(c))}</a></li>"
        for c in range(CATEGORIES)
    )
    return (
        "<body><header><a class='logo' href='/'><img src='/static/logo.svg' alt='Bench Home "
        "Store' width='120' height='32'></a><form class='search' action='/search'><input "
        "type='search' name='q' placeholder='Search products'><button>Search</button></form>"
        "<div class='account'><a href='/account'>Account</a> <a href='/cart'>Cart (0)</a></div>"
        f"<nav aria-label='Categories'><ul>{links}</ul></nav></header>\n"
    )


def _footer(seed: int) -> str:
    groups = ("About us", "Customer service", "Delivery", "Returns", "Careers", "Press")
    columns = "".join(
        f"<div class='col'><h4>{g}</h4><ul>"
        + "".join(f"<li><a href='/info/{i}/{k}'>{g} page {k}</a></li>" for k in range(5))
        + "</ul></div>"
        for i, g in enumerate(groups)
    )
    return (
        f"<footer>{columns}<p class='legal'>&copy; 2026 Bench Home Store. All prices include VAT."
        "</p></footer>\n<script>window.dataLayer=window.dataLayer||[];function gtag(){dataLayer."
        "push(arguments)}gtag('js',new Date());gtag('config','G-BENCH00');"
        f"var pageSeed={seed};document.querySelectorAll('.card').forEach(function(c){{c."
        "addEventListener('click',function(){gtag('event','select_item')})});</script>"
        "<script src='/static/app.js' defer></script></body></html>\n"
    )


def _card(number: int) -> str:
    product = ProductData(number)
    return (
        f"<div class='card' data-id='{number}'><a href='/product/{number}'><img "
        f"src='/img/{number}/thumb.jpg' alt='{escape(product.title)}' loading='lazy' "
        f"width='200' height='200'></a><h3><a href='/product/{number}'>{escape(product.title)}"
        f"</a></h3><span class='card-price'>${product.price}</span>"
        "<button class='add' type='button'>Add to cart</button></div>"
    )


def product_page(number: int) -> str:
    p = ProductData(number)
    rng = p.rng
    tags = "".join(f"<li class='tag'>{escape(t)}</li>" for t in p.tags)
    paragraphs = "".join(
        f"<p>{_words(rng, rng.randint(40, 110))}</p>" for _ in range(rng.randint(1, 5))
    )
    specs = "".join(
        f"<tr><th>{escape(rng.choice(_WORDS).title())}</th><td>{_words(rng, rng.randint(2, 6))}"
        "</td></tr>"
        for _ in range(rng.randint(6, 12))
    )
    related = "".join(_card(rng.randrange(PRODUCTS)) for _ in range(rng.randint(3, 8)))
    reviews = "".join(
        f"<blockquote><p>{_words(rng, rng.randint(15, 45))}</p><footer>Customer "
        f"{rng.randint(100, 999)}, {rng.randint(1, 5)}/5</footer></blockquote>"
        for _ in range(rng.randint(0, 4))
    )
    ld = json.dumps(
        {
            "@context": "https://schema.org",
            "@type": "Product",
            "name": p.title,
            "sku": p.sku,
            "offers": {"@type": "Offer", "price": p.price, "priceCurrency": "USD"},
        }
    )
    category = category_name(p.category)
    return (
        _head(p.title, f"Buy {p.title} at Bench Home Store")
        + _header()
        + "<main><ol class='breadcrumbs'><li><a href='/'>Home</a></li><li><a "
        f"href='/category/{p.category}/0'>{escape(category)}</a></li><li>{escape(p.title)}</li>"
        f"</ol><div id='product' data-sku='{p.sku}' data-category='{p.category}'>"
        f"<div class='gallery'><img src='/img/{number}/1.jpg' alt='{escape(p.title)}' "
        f"width='600' height='600'><img src='/img/{number}/2.jpg' alt='' width='120'></div>"
        f"<div class='product-info'><h1 class='product-title'>{escape(p.title)}</h1>"
        f"<p class='price'>${p.price}</p><p class='stock'>In stock ({rng.randint(1, 80)} left)"
        f"</p><ul class='tags'>{tags}</ul><button class='buy' type='button'>Add to cart</button>"
        f"</div><section class='description'><h2>Description</h2>{paragraphs}</section>"
        f"<section><h2>Specifications</h2><table class='specs'>{specs}</table></section>"
        f"<section class='reviews'><h2>Reviews</h2>{reviews or '<p>No reviews yet.</p>'}"
        f"</section></div><section class='related'><h2>You may also like</h2><div class='grid'>"
        f"{related}</div></section></main>\n"
        f"<script type='application/ld+json'>{ld}</script>\n" + _footer(number)
    )


def category_page(category: int, page: int, products: int = PRODUCTS) -> str:
    name = category_name(category)
    first = page * CARDS_PER_PAGE
    numbers = [
        category + k * CATEGORIES
        for k in range(first, first + CARDS_PER_PAGE)
        if category + k * CATEGORIES < products
    ]
    cards = "".join(_card(n) for n in numbers)
    pages = category_pages(products)
    pager = "".join(
        f"<a href='/category/{category}/{k}'{' aria-current=page' if k == page else ''}>{k + 1}</a>"
        for k in range(max(0, page - 3), min(pages, page + 4))
    )
    return (
        _head(f"{name} - page {page + 1}", f"Shop {name}")
        + _header()
        + f"<main><ol class='breadcrumbs'><li><a href='/'>Home</a></li><li>{escape(name)}</li>"
        f"</ol><h1 class='category-title'>{escape(name)}</h1><div class='filters'><label>Sort "
        "<select name='sort'><option>Popular</option><option>Price</option></select></label>"
        f"</div><div class='grid'>{cards}</div><nav class='pager'>{pager}</nav></main>\n"
        + _footer(100_000 + category)
    )


_PRODUCT = re.compile(r"^/product/(\d{1,7})$")
_SCRIPTED = re.compile(r"^/scripted/(\d{1,7})$")
_API = re.compile(r"^/api/product/(\d{1,7})$")
_CATEGORY = re.compile(r"^/category/(\d{1,4})/(\d{1,5})$")


class Catalog:
    """Path → complete HTTP response bytes (keep-alive form), rendered once and cached."""

    def __init__(self, products: int) -> None:
        self.products = products
        self.pages = category_pages(products)
        self._cache: dict[str, tuple[bytes, bytes]] = {}  # path: (its ETag, its response)
        self.requests = 0
        self.not_modified = 0  # 304s answered
        self.connections = 0
        self.not_found = 0

    def prerender(self, count: int) -> None:
        for n in range(min(count, self.products)):
            self.response(f"/product/{n}")
        for c in range(CATEGORIES):
            for page in range(self.pages):
                self.response(f"/category/{c}/{page}")

    def response(self, path: str, if_none_match: bytes | None = None) -> bytes:
        """The page's response; ``304 Not Modified`` to ``If-None-Match`` naming its ETag
        (every cached page has one: a digest of its body)."""
        cached = self._cache.get(path)
        if cached is None:
            status, ctype, body = self._render(path)
            if not (
                status.startswith("200")
                and path.startswith(("/product/", "/category/", "/scripted/", "/api/"))
            ):
                return _http(status, ctype, body)
            etag = f'"{zlib.crc32(body):08x}-{len(body):x}"'.encode()
            cached = self._cache[path] = (etag, _http(status, ctype, body, etag))
        etag, data = cached
        if if_none_match is not None and if_none_match == etag:
            self.not_modified += 1
            return NOT_MODIFIED_HEAD + b"ETag: " + etag + b"\r\n\r\n"
        return data

    def _render(self, path: str) -> tuple[str, str, bytes]:
        html = "text/html; charset=utf-8"
        match = _PRODUCT.match(path)
        if match and int(match.group(1)) < self.products:
            return "200 OK", html, product_page(int(match.group(1))).encode()
        match = _SCRIPTED.match(path)
        if match and int(match.group(1)) < self.products:
            return "200 OK", html, scripted_page(int(match.group(1))).encode()
        match = _API.match(path)
        if match and int(match.group(1)) < self.products:
            return "200 OK", "application/json", product_json(int(match.group(1))).encode()
        match = _CATEGORY.match(path)
        if match and int(match.group(1)) < CATEGORIES and int(match.group(2)) < self.pages:
            page = category_page(int(match.group(1)), int(match.group(2)), self.products)
            return "200 OK", html, page.encode()
        if path == "/robots.txt":
            return "200 OK", "text/plain; charset=utf-8", b"User-agent: *\nAllow: /\n"
        if path == "/healthz":
            return "200 OK", "text/plain; charset=utf-8", b"ok\n"
        if path == "/__stats":
            stats = {
                "requests": self.requests,
                "connections": self.connections,
                "not_found": self.not_found,
                "not_modified": self.not_modified,
                "cached_pages": len(self._cache),
            }
            return "200 OK", "application/json", json.dumps(stats).encode()
        if path == "/":
            links = "".join(
                f"<li><a href='/category/{c}/0'>{escape(category_name(c))}</a></li>"
                for c in range(CATEGORIES)
            )
            page = _head("Home", "Bench Home Store") + _header() + f"<main><ul>{links}</ul></main>"
            return "200 OK", html, (page + _footer(0)).encode()
        self.not_found += 1
        return "404 Not Found", html, b"<!DOCTYPE html><h1>Not found</h1>"


def _http(status: str, content_type: str, body: bytes, etag: bytes | None = None) -> bytes:
    head = (
        f"HTTP/1.1 {status}\r\nContent-Type: {content_type}\r\nContent-Length: {len(body)}\r\n"
        "Cache-Control: public, max-age=300\r\nServer: bench-catalog\r\n"
    ).encode()
    if etag is not None:
        head += b"ETag: " + etag + b"\r\n"
    return head + b"\r\n" + body


NOT_MODIFIED_HEAD = b"HTTP/1.1 304 Not Modified\r\nServer: bench-catalog\r\n"
_IF_NONE_MATCH = re.compile(rb"\r\nif-none-match:[ \t]*([^\r\n]*?)[ \t]*(?:\r\n|$)")


class _HttpProtocol(asyncio.Protocol):
    """HTTP/1.1 GET/HEAD with keep-alive; requests are answered in order as they arrive."""

    MAX_HEAD = 64 * 1024

    def __init__(self, catalog: Catalog) -> None:
        self._catalog = catalog
        self._buffer = b""
        self._transport: asyncio.Transport | None = None

    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        assert isinstance(transport, asyncio.Transport)
        self._transport = transport
        self._catalog.connections += 1

    def data_received(self, data: bytes) -> None:
        assert self._transport is not None
        self._buffer += data
        while True:
            end = self._buffer.find(b"\r\n\r\n")
            if end < 0:
                if len(self._buffer) > self.MAX_HEAD:
                    self._transport.close()
                return
            head, self._buffer = self._buffer[:end], self._buffer[end + 4 :]
            if not self._answer(head):
                self._transport.close()
                return

    def _answer(self, head: bytes) -> bool:
        """Write the response; ``False`` when the connection must be closed afterwards."""
        assert self._transport is not None
        line, _, headers = head.partition(b"\r\n")
        parts = line.split(b" ")
        if len(parts) != 3 or parts[0] not in (b"GET", b"HEAD"):
            self._transport.write(_http("400 Bad Request", "text/plain", b"bad request\n"))
            return False
        method, target, version = parts
        lowered = headers.lower()
        if b"\r\ncontent-length:" in b"\r\n" + lowered or b"transfer-encoding:" in lowered:
            self._transport.write(_http("400 Bad Request", "text/plain", b"no bodies\n"))
            return False
        path = target.split(b"?", 1)[0].decode("latin-1")
        if path != "/__stats":  # the benchmark's own reads of the counters don't count
            self._catalog.requests += 1
        validator = _IF_NONE_MATCH.search(b"\r\n" + lowered)
        response = self._catalog.response(path, validator.group(1) if validator else None)
        if method == b"HEAD":
            response = response[: response.index(b"\r\n\r\n") + 4]
        self._transport.write(response)
        return version == b"HTTP/1.1" and b"connection: close" not in lowered


def addresses(extra_hosts: int) -> list[str]:
    """127.0.0.1, then 127.0.0.2, 127.0.0.3 … for ``extra_hosts`` more (loopback only)."""
    return ["127.0.0.1"] + [f"127.0.{n // 256}.{n % 256}" for n in range(2, extra_hosts + 2)]


async def serve(port: int, products: int, prerender: int, extra_hosts: int = 0) -> None:
    catalog = Catalog(products)
    catalog.prerender(prerender)
    loop = asyncio.get_running_loop()
    server = await loop.create_server(
        lambda: _HttpProtocol(catalog), addresses(extra_hosts), port, backlog=1024
    )
    stop = asyncio.Event()
    for signum in (signal.SIGTERM, signal.SIGINT):
        loop.add_signal_handler(signum, stop.set)
    print(f"catalog site on http://127.0.0.1:{port} ({products} products)", flush=True)
    async with server:
        await stop.wait()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--port", type=int, required=True)
    parser.add_argument("--products", type=int, default=PRODUCTS)
    parser.add_argument("--prerender", type=int, default=0, help="render the first N products")
    parser.add_argument(
        "--extra-hosts", type=int, default=0, help="also listen on 127.0.0.2 … (this many)"
    )
    args = parser.parse_args()
    with contextlib.suppress(KeyboardInterrupt):
        asyncio.run(serve(args.port, args.products, args.prerender, args.extra_hosts))


if __name__ == "__main__":
    main()
