"""A small bundled catalog site: deterministic pages whose true values tests can compute."""

from __future__ import annotations

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


def index_page(count: int) -> str:
    links = "".join(f"<li><a href='/product/{n}'>Product {n}</a></li>" for n in range(count))
    head = "<!doctype html><html><head><title>Demo shop</title></head>"
    return f"{head}<body><ul>{links}</ul></body></html>"
