"""What a page declares of itself (main_content/declared.py): its title, and the facts of the
one product, job or event its schema.org data names (JSON-LD, microdata, RDFa), read within
bounds whatever the page holds."""

from __future__ import annotations

import json

from lxml import html as lxml_html  # type: ignore[import-untyped]

from scrapejobs_shared.extraction.main_content import Declared, PageKind, declared


def _declared(head: str, body: str = "<p>x</p>") -> Declared:
    page = lxml_html.fromstring(f"<html><head>{head}</head><body>{body}</body></html>")
    return declared(page, "https://shop.test/p/1")


def _pairs(page: Declared) -> tuple[tuple[str, str], ...]:
    return tuple((fact.label, fact.value) for fact in page.facts)


def _ld(data: object) -> str:
    return f"<script type='application/ld+json'>{json.dumps(data)}</script>"


def test_the_title_is_open_graphs_else_the_documents() -> None:
    assert _declared("<title>Kettle | Shop</title>").title == "Kettle | Shop"
    both = _declared("<title>Kettle | Shop</title><meta property='og:title' content=' Kettle '>")
    assert both.title == "Kettle"


def test_a_product_offer_gives_price_availability_and_sku() -> None:
    page = _declared(_ld({
        "@context": "https://schema.org", "@type": "Product", "name": "Kettle", "sku": "K-1",
        "offers": {"@type": "Offer", "price": "49.9", "priceCurrency": "USD",
                   "availability": "https://schema.org/InStock"},
    }))  # fmt: skip
    assert page.kind is PageKind.PRODUCT
    assert _pairs(page) == (
        ("Price", "49.9 USD"),
        ("Availability", "In stock"),
        ("SKU", "K-1"),
    )


def test_a_graph_an_aggregate_offer_and_a_price_specification() -> None:
    page = _declared(_ld({"@graph": [
        {"@type": "BreadcrumbList"},
        {"@type": ["Product", "Thing"], "name": "Press", "offers": [
            {"@type": "AggregateOffer", "lowPrice": 1200, "highPrice": "1500.50",
             "priceCurrency": "EUR"}]},
    ]}))  # fmt: skip
    assert _pairs(page) == (("Price", "1,200 to 1,500.50 EUR"),)
    spec = _declared(_ld({"@type": "Product", "name": "A", "offers": {
        "priceSpecification": {"price": "3", "priceCurrency": "GBP"}}}))  # fmt: skip
    assert _pairs(spec) == (("Price", "3 GBP"),)


def test_microdata_and_rdfa_products() -> None:
    microdata = _declared("", (
        "<div itemscope itemtype='http://schema.org/Product'><h1 itemprop='name'>Planter</h1>"
        "<span itemprop='offers' itemscope itemtype='http://schema.org/Offer'>"
        "<meta itemprop='price' content='34'><meta itemprop='priceCurrency' content='USD'>"
        "<link itemprop='availability' href='http://schema.org/OutOfStock'></span>"
        "<div itemprop='sku'>FW-1</div></div>"
    ))  # fmt: skip
    assert _pairs(microdata) == (
        ("Price", "34 USD"),
        ("Availability", "Out of stock"),
        ("SKU", "FW-1"),
    )
    rdfa = _declared("", (
        "<div vocab='https://schema.org/' typeof='Product'><h1 property='name'>Pack</h1>"
        "<div property='offers' typeof='Offer'><meta property='priceCurrency' content='EUR'>"
        "<span property='price' content='89.00'>89,00</span></div></div>"
    ))  # fmt: skip
    assert _pairs(rdfa) == (("Price", "89.00 EUR"),)


def test_a_job_and_an_event() -> None:
    job = _declared(_ld({
        "@type": "JobPosting", "title": "Engineer", "employmentType": ["FULL_TIME", "CONTRACTOR"],
        "hiringOrganization": {"name": "Acme"},
        "jobLocation": {"address": {"addressLocality": "Lyon", "addressCountry": "FR"}},
        "baseSalary": {"currency": "EUR", "value": {"value": 50000, "unitText": "YEAR"}},
    }))  # fmt: skip
    assert _pairs(job) == (
        ("Company", "Acme"), ("Location", "Lyon, FR"),
        ("Salary", "50,000 EUR a year"), ("Employment", "Full-time, Contract"),
    )  # fmt: skip
    event = _declared(_ld({
        "@type": "MusicEvent", "name": "Gig", "startDate": "2027-03-05T20:00",
        "location": {"@type": "Place", "name": "The Hall", "address": "Leeds"},
    }))  # fmt: skip
    assert _pairs(event) == (("When", "5 March 2027, 20:00"), ("Where", "The Hall, Leeds"))


def test_a_listing_of_products_declares_no_facts() -> None:
    cards = "".join(_ld({"@type": "Product", "name": f"P{n}", "sku": str(n)}) for n in range(3))
    assert _pairs(_declared(cards)) == ()


def test_hostile_data_is_read_within_bounds_or_not_at_all() -> None:
    deep = "[" * 90_000 + "]" * 90_000  # json.loads recurses too deep: skipped
    huge = json.dumps({"@type": "Product", "name": "x", "sku": "y" * 300_000})
    broken = "{not json"
    scripts = (deep, huge, broken)
    page = _declared("".join(f"<script type='application/ld+json'>{t}</script>" for t in scripts))
    assert _pairs(page) == ()
    many = _ld({"@type": "Product", "name": "n", "offers": [{"price": "1"}] * 10_000})
    assert _pairs(_declared(many)) == (("Price", "1"),)


def _options(body: str, head: str = "<meta property='og:type' content='product'>") -> object:
    return dict(_pairs(_declared(head, body))).get("Options")


def test_a_products_options_come_from_its_add_to_cart_form() -> None:
    woo = (
        "<form class='variations_form cart' action='/product/mug/'>"
        "<label for='pa_colour'>Colour</label><select id='pa_colour' name='attribute_pa_colour'>"
        "<option value=''>Choose an option</option><option value='oat'>Oatmeal</option>"
        "<option value='ink'>Ink blue</option></select>"
        "<select name='attribute_size'><option value='s'>Small</option>"
        "<option value='l'>Large</option></select>"
        "<input type='number' name='quantity' value='1'></form>"
        "<form action='/search'><select name='sort'><option value='a'>A</option>"
        "<option value='b'>B</option></select></form>"
    )
    assert _options(woo) == "Colour: Oatmeal, Ink blue; Small, Large"
    dawn = (
        "<fieldset><legend>Color</legend>"
        "<input type='radio' id='c1' name='Color' value='Sage' form='pf'>"
        "<label for='c1'>Sage<span class='visually-hidden'>Variant sold out</span></label>"
        "<input type='radio' id='c2' name='Color' value='Ink' form='pf'>"
        "<label for='c2'>Ink</label></fieldset><form id='pf' action='/cart/add'></form>"
    )
    assert _options(dawn) == "Color: Sage, Ink"
    assert _options(woo, head="") is None  # not a product page
    one = "<form action='/cart'><select name='size'><option value='m'>M</option></select></form>"
    assert _options(one) is None  # one choice is no choice


def test_options_are_bounded() -> None:
    many = "".join(f"<option value='{n}'>Choice {n}</option>" for n in range(500))
    groups = "".join(f"<select name='g{n}'>{many}</select>" for n in range(50))
    options = _options(f"<form action='/cart'>{groups}</form>")
    assert isinstance(options, str)
    assert options.count(";") == 4 and options.count("Choice") == 5 * 30


def test_markup_items_read_only_the_properties_they_use_and_at_most_a_value_each() -> None:
    """A property nested in itself (200 deep: the HTML parser keeps 255 levels) is read once a
    level, 200 characters at most, and a property no fact uses is not read at all."""
    chain = "<span itemprop='sku'>" * 200 + "S" * 1000 + "</span>" * 200
    unused = "<div itemprop='description'>" + "words " * 100_000 + "</div>"
    page = _declared(
        "",
        f"<div itemscope itemtype='https://schema.org/Product'>{chain}{unused}</div>",
    )
    assert _pairs(page) == (("SKU", "S" * 200),)
