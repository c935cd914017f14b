"""A small bundled catalog site: deterministic pages whose true values tests can compute, as
served (``/product/N``) and as a script builds them in the browser (``/scripted/N``)."""

from __future__ import annotations

import json
from dataclasses import dataclass
from html import escape


@dataclass(frozen=True, slots=True)
class Product:
    number: int

    @property
    def title(self) -> str:
        return f"Product {self.number}"

    @property
    def price(self) -> str:
        return f"{(self.number * 37) % 1000 + 0.99:.2f}"

    @property
    def sku(self) -> str:
        return f"SKU-{self.number:05d}"

    @property
    def tags(self) -> list[str]:
        return [f"tag{self.number % 3}", f"tag{self.number % 5}"]


def product_page(number: int) -> str:
    product = Product(number)
    tags = "".join(f'<li class="tag">{escape(t)}</li>' for t in product.tags)
    return (
        "<!doctype html><html lang='en'><head><meta charset='utf-8'>"
        f"<title>{escape(product.title)} | Demo shop</title>"
        f"<meta name='description' content='Buy {escape(product.title)}'></head><body>"
        f"<h1 class='title'>{escape(product.title)}</h1>"
        f"<p class='price' data-sku='{product.sku}'>$<span>{product.price}</span></p>"
        f"<ul class='tags'>{tags}</ul>"
        f"<a href='/product/{number + 1}'>next</a></body></html>"
    )


def product_json(number: int) -> str:
    product = Product(number)
    return json.dumps(
        {"title": product.title, "price": product.price, "sku": product.sku, "tags": product.tags}
    )


def scripted_product_page(number: int, delay_ms: int = 0) -> str:
    """Product ``number`` as a script builds it (after ``delay_ms``) from ``/api/product/N``:
    the same elements as ``product_page`` once rendered, none in the HTML as served."""
    return (
        "<!doctype html><html lang='en'><head><meta charset='utf-8'>"
        "<title>Demo shop</title></head><body><main id='app'>loading…</main><script>"
        f"setTimeout(() => fetch('/api/product/{number}').then(r => r.json()).then(p => {{"
        "const app = document.getElementById('app'); app.textContent = '';"
        "const h1 = document.createElement('h1'); h1.className = 'title';"
        "h1.textContent = p.title; app.appendChild(h1);"
        "const price = document.createElement('p'); price.className = 'price';"
        "price.dataset.sku = p.sku; const span = document.createElement('span');"
        "span.textContent = p.price; price.append('$', span); app.appendChild(price);"
        "const tags = document.createElement('ul'); tags.className = 'tags';"
        "for (const t of p.tags) { const li = document.createElement('li');"
        "li.className = 'tag'; li.textContent = t; tags.appendChild(li); }"
        f"app.appendChild(tags); }}), {delay_ms});"
        "</script></body></html>"
    )


def index_page(count: int) -> str:
    links = "".join(f"<li><a href='/product/{n}'>Product {n}</a></li>" for n in range(count))
    head = "<!doctype html><html><head><title>Demo shop</title></head>"
    return f"{head}<body><ul>{links}</ul></body></html>"
