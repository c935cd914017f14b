"""The page-shape suite (support/page_shapes.py): pages in the markup of common shop
platforms, news, blog, recipe, documentation, forum, category, job and event pages, each read
from the markdown a job gets by default: all of what a reader needs (the title, a product's
price, stock and SKU, a headline's byline and date, a job's company, place and salary, an
event's date and venue, a category's cards), none of the chrome around it."""

from __future__ import annotations

import pytest

from scrapejobs_shared.extraction import extract_page
from scrapejobs_shared.extraction.content_scope import ContentScope
from support.extraction_benchmarks import markdown_text
from support.page_shapes import BY_NAME, SHAPES, PageShape, verdict


def _markdown(shape: PageShape) -> str:
    extraction = extract_page(
        shape.html, content_type="text/html", url=f"https://site.test{shape.path}",
        formats=["markdown"],
    )  # fmt: skip
    markdown = extraction.data["markdown"]
    assert isinstance(markdown, str), extraction.errors
    return markdown


@pytest.mark.parametrize("shape", SHAPES, ids=[s.name for s in SHAPES])
def test_each_shape_holds_what_a_reader_needs_and_none_of_its_chrome(shape: PageShape) -> None:
    markdown = _markdown(shape)
    result = verdict(shape, markdown_text(markdown))
    assert result.missing == () and result.present == (), markdown


def test_the_suite_covers_the_platforms_and_kinds_the_issue_names() -> None:
    kinds = {s.kind for s in SHAPES}
    assert kinds >= {"product", "article", "recipe", "docs", "forum", "listing", "job", "event"}
    assert {"static_shop", "shopify_dawn", "woocommerce", "magento_luma", "prestashop"} <= set(
        BY_NAME
    )
    assert {"xenforo", "discourse", "phpbb", "schema_rdfa", "schema_jsonld"} <= set(BY_NAME)


@pytest.mark.parametrize(
    ("name", "heading"),
    [
        ("static_shop", "# Acme Kettle 2000"),
        ("woocommerce", "# Speckled Stoneware Mug"),
        ("news", "# Harbour town votes to rebuild its flood wall after winter storms"),
        ("blog", "# Why my sourdough stopped rising (and how I fixed it)"),
        ("category", "# Enamel Cookware"),
        ("xenforo", "# Best wood for a first workbench top?"),
    ],
)
def test_the_title_heads_the_markdown(name: str, heading: str) -> None:
    assert _markdown(BY_NAME[name]).startswith(heading + "\n")


def test_a_product_keeps_its_header_facts_beside_its_description_in_page_order() -> None:
    markdown = _markdown(BY_NAME["static_shop"])
    order = ["# Acme Kettle 2000", "$49.99", "In stock", "boils a litre", "| Capacity"]
    assert [markdown.index(part) for part in order] == sorted(markdown.index(p) for p in order)


def test_facts_only_the_page_declares_follow_the_title_once() -> None:
    """A price a script fills in (schema.org JSON-LD alone says it) and a job's overview in a
    sidebar (chrome) come from the page's schema.org data; a fact the content shows already
    (the mug's price and stock) is not repeated."""
    coffee = _markdown(BY_NAME["schema_jsonld"])
    assert coffee.startswith(
        "# Aeropress Go Travel Coffee Press\n\n- **Price:** 31.95 to 39.95 GBP\n"
        "- **Availability:** Limited availability\n- **SKU:** BSC-AP-GO\n"
    ), coffee
    job = _markdown(BY_NAME["job"])
    assert "- **Salary:** 55,000 to 70,000 GBP a year" in job
    assert "- **Location:** Bristol, England, GB (remote)" in job
    assert "**Company:**" not in job  # shown under the title already
    mug = _markdown(BY_NAME["woocommerce"])
    assert "**Price:**" not in mug and "**Availability:**" not in mug


def test_main_content_off_is_the_whole_page_without_added_facts() -> None:
    extraction = extract_page(
        BY_NAME["schema_jsonld"].html, content_type="text/html", url="https://site.test/p",
        formats=["markdown"], content=ContentScope(main_only=False),
    )  # fmt: skip
    markdown = extraction.data["markdown"]
    assert isinstance(markdown, str)
    assert "Frequently bought together" in markdown and "**Price:**" not in markdown


def test_clean_html_keeps_the_pages_own_markup_without_made_up_parts() -> None:
    """``clean_html`` holds the title heading and facts the page shows, never a heading made of
    its ``<title>`` or a list made of its schema.org data (those are the markdown's)."""
    extraction = extract_page(
        BY_NAME["schema_jsonld"].html, content_type="text/html", url="https://site.test/p",
        formats=["clean_html", "markdown"],
    )  # fmt: skip
    html, markdown = extraction.data["clean_html"], extraction.data["markdown"]
    assert isinstance(html, str) and isinstance(markdown, str)
    assert "Aeropress Go Travel Coffee Press</h1>" in html and "Price:" not in html
    assert "- **Price:** 31.95 to 39.95 GBP" in markdown
