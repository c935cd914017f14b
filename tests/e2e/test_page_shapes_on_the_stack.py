"""The page-shape suite (support/page_shapes.py) through the stack, as users meet it: Firecrawl's
own SDK (firecrawl-py, unmodified) scraping a product page in each shop platform's markup and a
news page, then batch-scraping the whole suite; and a native ``/v1`` job asking for the
``markdown`` format with every other option left at its default. Each markdown holds what a
reader needs (a product's name, price and availability; a headline) and none of the related
products, navigation or footer around it."""

from __future__ import annotations

import uuid

import pytest
from firecrawl import Firecrawl

from support.extraction_benchmarks import markdown_text
from support.jobs import all_results, submit, wait_finished
from support.page_shapes import BY_NAME, SHAPES, verdict
from support.site import Site

pytestmark = [pytest.mark.emulators, pytest.mark.stack]

# (page, its product's name, price and availability as the page shows them or declares them)
PRODUCTS = [
    ("static_shop", "Acme Kettle 2000", "$49.99", "In stock"),
    ("shopify_dawn", "Linen Apron", "$38.00", "In stock"),
    ("woocommerce", "Speckled Stoneware Mug", "$24.00", "12 in stock"),
    ("magento_luma", "Sprout Planter", "$34.00", "In stock"),
    ("prestashop", "Cotton Throw Blanket", "$59.00", "In stock"),
    ("schema_rdfa", "Wanderrucksack Alpen 30", "89,00", "sofort lieferbar"),
    ("schema_jsonld", "Aeropress Go Travel Coffee Press", "31.95", "Limited availability"),
]


def _url(site: Site, name: str) -> str:
    return f"{site.url}{BY_NAME[name].path}?t={uuid.uuid4().hex[:6]}"


@pytest.mark.parametrize(
    ("name", "product", "price", "stock"), PRODUCTS, ids=[p[0] for p in PRODUCTS]
)
def test_firecrawl_scrape_keeps_a_products_name_price_and_stock(
    firecrawl: Firecrawl, site: Site, name: str, product: str, price: str, stock: str
) -> None:
    markdown = firecrawl.scrape(_url(site, name), formats=["markdown"], timeout=30000).markdown
    assert markdown is not None
    assert f"# {product}\n" in markdown, markdown  # its name, as a heading
    text = " ".join(markdown_text(markdown).split())
    for needed in (price, stock):
        assert needed in text, markdown
    result = verdict(BY_NAME[name], text)  # the related products, the navigation, the footer
    assert result.present == () and result.missing == (), markdown


def test_firecrawl_scrape_keeps_a_news_storys_headline_byline_and_date(
    firecrawl: Firecrawl, site: Site
) -> None:
    markdown = firecrawl.scrape(_url(site, "news"), formats=["markdown"], timeout=30000).markdown
    assert markdown is not None
    assert markdown.startswith(
        "# Harbour town votes to rebuild its flood wall after winter storms\n"
    ), markdown
    result = verdict(BY_NAME["news"], markdown_text(markdown))
    assert result.missing == () and result.present == (), markdown


def test_firecrawl_batch_scrape_of_the_whole_suite(firecrawl: Firecrawl, site: Site) -> None:
    urls = {_url(site, shape.name): shape for shape in SHAPES}
    job = firecrawl.batch_scrape(
        list(urls), formats=["markdown"], poll_interval=1, wait_timeout=120
    )
    assert job.status == "completed" and len(job.data) == len(SHAPES)
    failing = {}
    for document in job.data:
        shape = urls[document.metadata_typed.source_url or ""]
        result = verdict(shape, markdown_text(document.markdown or ""))
        if not result.passed:
            failing[shape.name] = (result.missing, result.present)
    assert failing == {}


async def test_a_native_job_with_default_options_gives_the_same_markdown(api, site) -> None:
    urls = {_url(site, shape.name): shape for shape in SHAPES}
    job = await submit(api, {"urls": list(urls), "options": {"formats": ["markdown"]}})
    final = await wait_finished(api, job["id"])
    assert final["counts"]["succeeded"] == len(SHAPES), final
    failing = {}
    for row in await all_results(api, job["id"]):
        shape = urls[row["url"]]
        markdown = row["data"]["markdown"]
        result = verdict(shape, markdown_text(markdown))
        if not result.passed:
            failing[shape.name] = (result.missing, result.present)
    assert failing == {}
    product = next(r for r in await all_results(api, job["id"]) if "shopify_dawn" in r["url"])
    assert "# Linen Apron\n" in product["data"]["markdown"]
