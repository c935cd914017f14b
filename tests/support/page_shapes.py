"""The page-shape suite: pages in the real markup of common platforms and page kinds
(tests/data/page_shapes/), each with what a reader needs from its markdown and what must stay
out of it. Beside the public benchmarks (which leave a page's title out of their answers, and
whose word F1 barely notices a missing price): a page passes only with all of its ``must`` and
none of its ``must_not``.

Served by the test site at ``/shapes/NAME`` (support/site.py); scored by
tests/unit/extraction/test_page_shapes.py, by ``make bench-quality`` and, through the SDKs, by
tests/e2e/test_page_shapes_on_the_stack.py. Each string is looked for in the markdown read as
text (link targets dropped), case and spacing as written.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

FOLDER = Path(__file__).resolve().parent.parent / "data" / "page_shapes"

# Chrome most pages share (written per page where its words differ).
_SHOP_CHROME = ("Add to cart", "Subscribe")


@dataclass(frozen=True, slots=True)
class PageShape:
    name: str  # its file, without .html
    kind: str  # product, article, recipe, docs, forum, listing, job, event
    platform: str  # whose markup it is
    path: str  # where the test site serves it (forums are told by their address too)
    must: tuple[str, ...]
    must_not: tuple[str, ...]

    @property
    def html(self) -> bytes:
        return (FOLDER / f"{self.name}.html").read_bytes()


SHAPES: tuple[PageShape, ...] = (
    PageShape(
        "static_shop",
        "product",
        "a static shop (plain article.product markup)",
        "/shapes/static_shop",
        must=(
            "Acme Kettle 2000",
            "$49.99",
            "In stock",
            "boils a litre of water",
            "switches itself off",
            "1.7 litres",
            "2200 W",
        ),
        must_not=("Related products", "Toaster 9", "Winter sale", "Free returns", "Basket"),
    ),
    PageShape(
        "shopify_dawn",
        "product",
        "Shopify (Dawn theme)",
        "/shapes/shopify_dawn",
        must=(
            "Linen Apron",
            "$38.00",
            "In stock",
            "Color: Sage, Charcoal",
            "stonewashed linen",
            "flat-felled seams",
            "260 gsm",
        ),
        must_not=(
            "You may also like",
            "Waffle Tea Towel",
            "Quick links",
            "Subscribe to our emails",
            "Free shipping on orders",
            "Powered by Shopify",
            *_SHOP_CHROME,
        ),
    ),
    PageShape(
        "woocommerce",
        "product",
        "WooCommerce (Storefront theme)",
        "/shapes/woocommerce",
        must=(
            "Speckled Stoneware Mug",
            "$24.00",
            "12 in stock",
            "wheel-thrown mug in speckled buff clay",
            "HOC-MUG-01",
            "thrown by hand",
            "350 ml",
        ),
        must_not=(
            "Related products",
            "Ash-Glazed Tea Bowl",
            "Holds the heat",
            "Add a review",
            "Glazes & care",
            "Visit the studio",
            *_SHOP_CHROME,
        ),
    ),
    PageShape(
        "magento_luma",
        "product",
        "Magento (Luma theme)",
        "/shapes/magento_luma",
        must=(
            "Sprout Planter",
            "$34.00",
            "In stock",
            "FW-SP-12",
            "sized for herbs",
            "frost-proof stoneware clay",
            "12 cm",
        ),
        must_not=(
            "Related Products",
            "Herb Snips",
            "Tall Fern Planter",
            "even lovelier in person",
            "Sign Up for Our Newsletter",
            "Add to Cart",
            "Default welcome msg",
        ),
    ),
    PageShape(
        "prestashop",
        "product",
        "PrestaShop (classic theme)",
        "/shapes/prestashop",
        must=(
            "Cotton Throw Blanket",
            "$59.00",
            "In stock",
            "soft enough for the sofa",
            "shuttle loom",
            "LH-THROW-OAT",
            "130 x 170 cm",
        ),
        must_not=(
            "You might also like",
            "Linen Cushion Cover",
            "Get our latest news",
            "Our weavers",
            "Ecommerce software by PrestaShop",
            *_SHOP_CHROME,
        ),
    ),
    PageShape(
        "schema_rdfa",
        "product",
        "schema.org only (RDFa, no platform classes)",
        "/shapes/schema_rdfa",
        must=(
            "Wanderrucksack Alpen 30",
            "89,00",
            "sofort lieferbar",
            "GW-A30-BL",
            "belüfteter Netzrücken",
            "30 Liter",
        ),
        must_not=("Tagesrucksäcke", "Mein Konto", "Impressum", "In den Warenkorb"),
    ),
    PageShape(
        "schema_jsonld",
        "product",
        "schema.org only (JSON-LD; price and stock filled in by a script)",
        "/shapes/schema_jsonld",
        must=(
            "Aeropress Go Travel Coffee Press",
            "31.95",
            "39.95",
            "Limited availability",
            "packs into the Go's own mug",
        ),
        must_not=("Frequently bought together", "Pocket Scale", "VAT number"),
    ),
    PageShape(
        "news",
        "article",
        "a news site (headline above a two-column layout)",
        "/shapes/news",
        must=(
            "Harbour town votes to rebuild its flood wall after winter storms",
            "Maya Pennington",
            "30 November 2026",
            "voted unanimously",
            "designs are finalised",
        ),
        must_not=(
            "Most read",
            "Ferry timetable",
            "School roof repairs",
            "morning briefing",
            "About time",
            "Share on Facebook",
            "Storm floods harbour homes",
            "Registered in England",
        ),
    ),
    PageShape(
        "blog",
        "article",
        "a blog (WordPress, Twenty Twenty-One)",
        "/shapes/blog",
        must=(
            "Why my sourdough stopped rising (and how I fixed it)",
            "every loaf I baked came out flat",
            "A starter is a thermometer",
            "watch the dough, not the recipe",
        ),
        must_not=(
            "oven-light trick",
            "Leave a comment",
            "Recent posts",
            "Do you need a banneton",
            "Proudly powered by",
        ),
    ),
    PageShape(
        "recipe",
        "recipe",
        "a recipe site (WordPress, WP Recipe Maker)",
        "/shapes/recipe",
        must=(
            "Easy Weeknight Lentil Soup",
            "fridge is nearly empty",
            "red lentils",
            "vegetable stock",
            "simmer for twenty minutes",
            "Servings",
            "Freezes well",
        ),
        must_not=(
            "Jump to Recipe",
            "Pin Recipe",
            "kids asked for seconds",
            "Popular recipes",
            "Amazon Associate",
        ),
    ),
    PageShape(
        "docs",
        "docs",
        "a documentation site (Docusaurus)",
        "/shapes/docs",
        must=(
            "Retries and backoff",
            "may pass, such as a timeout",
            "client = Client(max_retries=5, backoff_factor=0.5)",
            "backoff_factor",
            "retry_unsafe=True",
        ),
        must_not=("Authentication", "Pagination", "Edit this page", "Built with Docusaurus"),
    ),
    PageShape(
        "xenforo",
        "forum",
        "a forum (XenForo 2)",
        "/threads/best-wood-for-a-first-workbench-top.4471/",
        must=(
            "Best wood for a first workbench top?",
            "cannot decide on the top",
            "boiled linseed oil",
            "solid-core one",
        ),
        must_not=(
            "Similar threads",
            "Roubo or Nicholson",
            "Terms and rules",
            "You must log in or register",
        ),
    ),
    PageShape(
        "discourse",
        "forum",
        "a forum (Discourse, its crawler view)",
        "/t/grafting-apple-onto-pear-rootstock/2211",
        must=(
            "Grafting apple onto pear rootstock",
            "whip-and-tongue grafts",
            "broke cleanly at the union",
            "use an interstem",
        ),
        must_not=("Related topics", "Chip budding in August", "Guidelines", "best viewed with"),
    ),
    PageShape(
        "phpbb",
        "forum",
        "a forum (phpBB 3, prosilver)",
        "/forum/viewtopic.php",
        must=(
            "Carburettor floods when the bike is parked on its side stand",
            "petrol drips from the left carburettor",
            "Viton-tipped needle",
            "floor is dry",
        ),
        must_not=("Who is online", "Delete cookies", "Powered by phpBB", "Parallel twins"),
    ),
    PageShape(
        "category",
        "listing",
        "a category page (Shopify collection)",
        "/shapes/category",
        must=(
            "Enamel Cookware",
            "fired twice",
            "Round Casserole 24 cm",
            "$189.00",
            "Enamelled Skillet 26 cm",
            "$95.00",
            "Stovetop Kettle",
            "$64.00",
            "Oval Roaster 33 cm",
            "$149.00",
        ),
        must_not=("In stock only", "Next page", "Find a stockist", "Caring for enamel"),
    ),
    PageShape(
        "job",
        "job",
        "a job board (overview in a sidebar, JobPosting in JSON-LD)",
        "/shapes/job",
        must=(
            "Senior Data Engineer",
            "Northwind Analytics",
            "Bristol",
            "55,000",
            "70,000",
            "forty terabytes of imagery",
            "when a cron job is enough",
        ),
        must_not=(
            "Similar jobs",
            "Analytics Engineer",
            "Report this job",
            "Back to search results",
            "Post a job",
        ),
    ),
    PageShape(
        "event",
        "event",
        "an event page (Eventbrite-like, Event in JSON-LD)",
        "/shapes/event",
        must=(
            "Winter Solstice Lantern Walk",
            "December 14",
            "Ashton Court Estate",
            "stable yard at five",
            "hot cider and apple juice",
        ),
        must_not=(
            "More events from this organiser",
            "Summer Bat Walk",
            "Help centre",
            "How it works",
        ),
    ),
)

BY_NAME = {shape.name: shape for shape in SHAPES}
BY_PATH = {shape.path: shape for shape in SHAPES}


@dataclass(frozen=True, slots=True)
class ShapeVerdict:
    shape: PageShape
    missing: tuple[str, ...]  # of its must
    present: tuple[str, ...]  # of its must_not

    @property
    def passed(self) -> bool:
        return not self.missing and not self.present


def verdict(shape: PageShape, text: str) -> ShapeVerdict:
    """How ``text`` (a markdown read as text: link targets dropped) holds up for ``shape``."""
    flat = " ".join(text.split())
    return ShapeVerdict(
        shape,
        tuple(s for s in shape.must if s not in flat),
        tuple(s for s in shape.must_not if s in flat),
    )
