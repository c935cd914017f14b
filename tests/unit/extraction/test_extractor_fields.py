"""Fields on real-world-shaped HTML: first/all, defaults, re, types, items, nesting, errors."""

from __future__ import annotations

from typing import Any

from scrapejobs_shared.extraction import ContentKind, FieldSpec, extract_page

SHOP_URL = "https://shop.example.com/catalog/shoes?page=2"

PRODUCT_GRID = """<!DOCTYPE html>
<html lang="en">
<head><title>Shoes | page 2</title></head>
<body>
  <nav><a href="/">Home</a> &gt; <a href="/catalog/">Catalog</a></nav>
  <h1 class="title">
      Running   shoes
  </h1>
  <ul class="grid">
    <li class="product" data-sku="A-1">
      <a class="link" href="/p/trail-runner?ref=grid"><h2>Trail Runner</h2></a>
      <span class="price">$1,299.99</span>
      <span class="stock">In stock: 12</span>
      <span class="badge">new</span><span class="badge">sale</span>
    </li>
    <li class="product" data-sku="B-2">
      <a class="link" href="p/road-racer"><h2>Road <em>Racer</em></h2></a>
      <span class="price">$89.50</span>
      <span class="stock">In stock: 3</span>
    </li>
    <li class="product" data-sku="C-3">
      <a class="link" href="https://cdn.example.net/p/kids"><h2>Kids&nbsp;Sneaker</h2></a>
      <span class="price">Call us</span>
      <span class="stock">Sold out</span>
    </li>
  </ul>
  <p class="count">Showing 3 of 1,234 results</p>
  <script>var tracking = "not text";</script>
</body>
</html>
"""


def _extract(html: str, fields: dict[str, Any], url: str = SHOP_URL):
    specs = {name: FieldSpec.model_validate(spec) for name, spec in fields.items()}
    return extract_page(
        html.encode(), content_type="text/html; charset=utf-8", url=url, fields=specs
    )


def test_product_grid_items():
    result = _extract(
        PRODUCT_GRID,
        {
            "products": {
                "css": "li.product",
                "items": {
                    "title": {"css": "h2"},
                    "price": {"css": ".price", "re": r"([\d,.]+)", "type": "float"},
                    "url": {"css": "a.link::attr(href)"},
                    "sku": {"xpath": "@data-sku"},
                    "badges": {"css": ".badge::text", "all": True},
                },
            }
        },
    )
    assert result.content_kind is ContentKind.HTML
    assert result.errors == {}
    assert result.data["products"] == [
        {
            "title": "Trail Runner",
            "price": 1299.99,
            "url": "https://shop.example.com/p/trail-runner?ref=grid",
            "sku": "A-1",
            "badges": ["new", "sale"],
        },
        {
            "title": "Road Racer",
            "price": 89.5,
            "url": "https://shop.example.com/catalog/p/road-racer",
            "sku": "B-2",
            "badges": [],
        },
        {
            "title": "Kids Sneaker",
            "price": None,  # "Call us" does not match the regex: default
            "url": "https://cdn.example.net/p/kids",
            "sku": "C-3",
            "badges": [],
        },
    ]


def test_element_values_are_visible_text_with_normalised_whitespace():
    result = _extract(PRODUCT_GRID, {"heading": {"css": "h1"}, "body": {"css": "body"}})
    assert result.data["heading"] == "Running shoes"
    assert "tracking" not in str(result.data["body"])
    assert "Trail Runner $1,299.99" in str(result.data["body"])


def test_selecting_a_normally_hidden_element_gives_its_text():
    html = (
        "<html><head><title> Page  title </title>"
        '<script type="application/ld+json">{"@type": "Product"}</script></head>'
        "<body><div>shown<script>hidden()</script></div></body></html>"
    )
    result = _extract(
        html,
        {
            "title": {"css": "title"},
            "ld": {"css": "script[type='application/ld+json']"},
            "div": {"css": "div"},
        },
    )
    assert result.data == {"title": "Page title", "ld": '{"@type": "Product"}', "div": "shown"}


def test_text_nodes_are_stripped_and_whitespace_only_ones_skipped():
    html = "<div id=d>\n   <b>bold</b>  after bold  \n</div>"
    result = _extract(
        html, {"first": {"css": "#d::text"}, "every": {"xpath": "//div/text()", "all": True}}
    )
    assert result.data == {"first": "after bold", "every": ["after bold"]}


def test_first_match_default_and_all():
    result = _extract(
        PRODUCT_GRID,
        {
            "first_price": {"css": ".price::text"},
            "all_prices": {"css": ".price::text", "all": True},
            "missing": {"css": ".nope::text"},
            "missing_with_default": {"css": ".nope::text", "default": "n/a"},
            "missing_all": {"css": ".nope", "all": True},
            "missing_all_with_default": {"css": ".nope", "all": True, "default": ["none"]},
        },
    )
    assert result.data == {
        "first_price": "$1,299.99",
        "all_prices": ["$1,299.99", "$89.50", "Call us"],
        "missing": None,
        "missing_with_default": "n/a",
        "missing_all": [],
        "missing_all_with_default": ["none"],
    }
    assert result.errors == {}


def test_regex_takes_the_first_surviving_match_and_group():
    result = _extract(
        PRODUCT_GRID,
        {
            "sold_out": {"css": ".stock::text", "re": r"Sold (\w+)"},
            "stocks": {"css": ".stock::text", "re": r"In stock: (\d+)", "all": True, "type": "int"},
            "whole_match": {"css": ".count::text", "re": r"[\d,]+ results"},
            "optional_group": {"css": ".count::text", "re": r"(?:(\d+) of)? ([\d,]+) results"},
        },
    )
    assert result.data["sold_out"] == "out"
    assert result.data["stocks"] == [12, 3]
    assert result.data["whole_match"] == "1,234 results"
    assert result.data["optional_group"] == "3"
    assert result.errors == {}


def test_type_conversions_and_per_field_errors():
    html = """<table>
      <tr><td class=n>1,234</td><td class=f>$12.99</td><td class=b>Yes</td></tr>
      <tr><td class=n>12.5</td><td class=f>abc</td><td class=b>off</td></tr>
      <tr><td class=n> 7 </td><td class=f>1,234.50</td><td class=b>maybe</td></tr>
      <tr><td class=n></td><td class=f></td><td class=b></td></tr>
    </table>"""
    result = _extract(
        html,
        {
            "count": {"css": "td.n", "type": "int"},
            "counts": {"css": "td.n", "type": "int", "all": True},
            "prices": {"css": "td.f", "type": "float", "all": True},
            "flags": {"css": "td.b", "type": "bool", "all": True},
            "bad": {"xpath": "(//td[@class='f'])[2]", "type": "float", "default": 0.0},
            "label": {"css": "td.n", "type": "string", "all": True},
        },
    )
    assert result.data["count"] == 1234
    assert result.data["counts"] == [1234, 7]  # "12.5" left out, empty cell is no value
    assert result.data["prices"] == [12.99, 1234.5]
    assert result.data["flags"] == [True, False]
    assert result.data["bad"] == 0.0  # the default, after a conversion error
    assert result.data["label"] == ["1,234", "12.5", "7", ""]  # strings keep empty cells
    assert result.errors == {
        "counts": "cannot convert '12.5' to int (1 of 3 values left out)",
        "prices": "cannot convert 'abc' to float (1 of 3 values left out)",
        "flags": "cannot convert 'maybe' to bool (1 of 3 values left out)",
        "bad": "cannot convert 'abc' to float",
    }


def test_conversion_error_on_single_value_falls_back_to_default():
    result = _extract("<p class=price>abc</p>", {"price": {"css": ".price", "type": "int"}})
    assert result.data == {"price": None}
    assert result.errors == {"price": "cannot convert 'abc' to int"}


CATALOG = """<html><body>
<section class="category"><h2>Shoes</h2>
  <div class="product"><span class="name">Runner</span><span class="price">10</span></div>
  <div class="product"><span class="name">Racer</span><span class="price">n/a</span></div>
</section>
<section class="category"><h2>Hats</h2>
  <div class="product"><span class="name">Cap</span><span class="price">5</span>
    <ul class="variants"><li>red</li><li>blue</li></ul></div>
</section>
<section class="category"><h2>Empty</h2></section>
</body></html>"""


def test_nested_items_with_errors_keyed_by_path():
    result = _extract(
        CATALOG,
        {
            "categories": {
                "css": "section.category",
                "items": {
                    "name": {"xpath": "./h2"},
                    "products": {
                        "css": ".product",
                        "items": {
                            "name": {"css": ".name"},
                            "price": {"css": ".price", "type": "int"},
                            "variants": {"xpath": ".//li", "all": True},
                        },
                    },
                },
            }
        },
    )
    assert result.data["categories"] == [
        {
            "name": "Shoes",
            "products": [
                {"name": "Runner", "price": 10, "variants": []},
                {"name": "Racer", "price": None, "variants": []},
            ],
        },
        {"name": "Hats", "products": [{"name": "Cap", "price": 5, "variants": ["red", "blue"]}]},
        {"name": "Empty", "products": []},
    ]
    assert result.errors == {
        "categories[].products[].price": (
            "cannot convert 'n/a' to int (at categories[0].products[1].price)"
        )
    }


def test_nested_xpath_with_leading_slashes_searches_the_whole_document():
    result = _extract(
        CATALOG,
        {
            "categories": {
                "css": "section.category",
                "items": {"relative": {"xpath": ".//h2"}, "absolute": {"xpath": "//h2"}},
            }
        },
    )
    assert [c["relative"] for c in result.data["categories"]] == ["Shoes", "Hats", "Empty"]
    assert {c["absolute"] for c in result.data["categories"]} == {"Shoes"}


def test_items_without_matches_and_non_element_matches():
    result = _extract(
        CATALOG,
        {
            "none": {"css": "article", "items": {"x": {"css": "b"}}},
            "none_default": {"css": "article", "items": {"x": {"css": "b"}}, "default": None},
            "texts": {"xpath": "//h2/text()", "items": {"x": {"css": "b"}}},
        },
    )
    assert result.data["none"] == []
    assert result.data["none_default"] == []
    assert result.data["texts"] == []
    assert "needs elements" in result.errors["texts"]


def test_xpath_functions_and_extensions():
    result = _extract(
        PRODUCT_GRID,
        {
            "count": {"xpath": "count(//li[has-class('product')])", "type": "int"},
            "has_sale": {"xpath": "boolean(//span[.='sale'])", "type": "bool"},
            "title": {"xpath": "string(//title)"},
            "regex": {"xpath": "//a[re:test(@href, '^/p/')]/@href", "all": True},
            "comment_free": {"xpath": "normalize-space(//h1)"},
        },
    )
    assert result.data == {
        "count": 3,
        "has_sale": True,
        "title": "Shoes | page 2",
        "regex": ["https://shop.example.com/p/trail-runner?ref=grid"],
        "comment_free": "Running shoes",
    }


def test_url_attributes_resolve_against_base_href_and_final_url():
    html = """<html><head><base href="/en/"></head><body>
      <a id=rel href="item/1">one</a>
      <a id=abs href="https://other.example/x">two</a>
      <a id=mail href="mailto:sales@example.com">mail</a>
      <img src="../img/a.png" alt="  An image ">
    </body></html>"""
    result = _extract(
        html,
        {
            "rel": {"css": "#rel::attr(href)"},
            "abs": {"css": "#abs::attr(href)"},
            "mail": {"css": "#mail::attr(href)"},
            "img": {"xpath": "//img/@src"},
            "alt": {"css": "img::attr(alt)"},
            "item_id": {"css": "#rel::attr(href)", "re": r"/item/(\d+)$", "type": "int"},
        },
        # the request was for http://example.com/old, redirected here:
        url="https://www.example.com/shop/index.html",
    )
    assert result.data == {
        "rel": "https://www.example.com/en/item/1",
        "abs": "https://other.example/x",
        "mail": "mailto:sales@example.com",
        "img": "https://www.example.com/img/a.png",
        "alt": "An image",
        "item_id": 1,
    }


def test_selector_errors_at_runtime_are_field_errors():
    result = _extract(PRODUCT_GRID, {"bad": {"xpath": "//a[@href=$undefined]", "default": "d"}})
    assert result.data == {"bad": "d"}
    assert "Undefined variable" in result.errors["bad"]


def test_match_cap_is_reported(monkeypatch):
    from scrapejobs_shared.extraction import field_evaluation

    monkeypatch.setattr(field_evaluation, "MAX_MATCHES_PER_FIELD", 2)
    result = _extract(PRODUCT_GRID, {"prices": {"css": ".price::text", "all": True}})
    assert result.data["prices"] == ["$1,299.99", "$89.50"]
    assert "more than 2 matches" in result.errors["prices"]


def test_page_value_budget_is_reported(monkeypatch):
    from scrapejobs_shared.extraction import field_evaluation

    monkeypatch.setattr(field_evaluation, "MAX_VALUES_PER_PAGE", 4)
    result = _extract(
        PRODUCT_GRID,
        {"products": {"css": "li.product", "items": {"title": {"css": "h2"}}}},
    )
    assert result.data["products"] == [{"title": "Trail Runner"}, {"title": "Road Racer"}]
    assert "more than 4 values" in result.errors["products"]


def test_broken_and_empty_markup_never_raise():
    fields = {"title": {"css": "h1"}, "all": {"css": "p", "all": True}}
    for html in ["", "   ", "<", "<h1>unclosed <p>one <p>two", "\x00<h1>nul</h1>"]:
        result = _extract(html, fields)
        assert set(result.data) == {"title", "all"}
        assert result.errors == {}
