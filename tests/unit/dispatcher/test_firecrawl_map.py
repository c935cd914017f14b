"""Which links /v2/map answers with: of the site (subdomains as asked), allowed by its
robots.txt, searched, without queries, at most the limit, the start URL first."""

from __future__ import annotations

from typing import Any

from scrapejobs_dispatcher.firecrawl.request_models import MapBody
from scrapejobs_dispatcher.firecrawl.site_map import Found, site_links
from scrapejobs_shared.config.settings import DEFAULT_USER_AGENT
from scrapejobs_shared.politeness.robots_rules import RobotsRules

ROBOTS = RobotsRules.parse(b"User-agent: *\nDisallow: /private/\n")


def mapped(found: Found, **body: Any) -> list[str]:
    request = MapBody.model_validate({"url": "https://www.shop.example/", **body})
    return site_links(request, found, DEFAULT_USER_AGENT)


def test_the_start_url_then_the_sitemaps_then_the_page_each_once() -> None:
    found = Found(
        page_links=["https://shop.example/b", "https://shop.example/a?x=1"],
        sitemap_links=["https://shop.example/a", "https://shop.example/a#top"],
        robots=ROBOTS,
    )
    assert mapped(found) == [
        "https://www.shop.example/",
        "https://shop.example/a",
        "https://shop.example/b",
    ]
    with_queries = mapped(found, ignoreQueryParameters=False)
    assert "https://shop.example/a?x=1" in with_queries


def test_only_the_site_and_what_robots_txt_allows() -> None:
    found = Found(
        page_links=[
            "https://www.shop.example/private/x",  # robots.txt keeps it out
            "https://blog.shop.example/p",  # a subdomain: its robots.txt is not read
            "https://elsewhere.example/",
            "https://notshop.example/",
            "mailto:x@shop.example",
        ],
        sitemap_links=[],
        robots=ROBOTS,
    )
    assert mapped(found) == ["https://www.shop.example/", "https://blog.shop.example/p"]
    assert mapped(found, includeSubdomains=False) == ["https://www.shop.example/"]


def test_search_and_limit() -> None:
    found = Found([f"https://shop.example/item/{n}" for n in range(10)], [], ROBOTS)
    assert mapped(found, search="ITEM/3") == ["https://shop.example/item/3"]
    assert len(mapped(found, limit=4)) == 4


def test_robots_txt_names_its_sitemaps() -> None:
    rules = RobotsRules.parse(b"Sitemap: https://a.example/s.xml\nSitemap: /rel.xml\n")
    assert rules.sitemaps == ["https://a.example/s.xml", "/rel.xml"]
    assert RobotsRules.allow_all().sitemaps == []
