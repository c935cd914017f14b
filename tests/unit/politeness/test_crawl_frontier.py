"""Which links of a crawled page become crawl tasks."""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from typing import Any

import pytest

from scrapejobs_shared.domain.crawl_spec import CrawlSpec
from scrapejobs_worker.crawl.crawl_frontier import (
    MAX_FILTERED_PATH_LENGTH,
    CrawlCandidate,
    CrawlFilter,
    crawl_key,
    next_candidates,
)

START = "https://example.com/"


def spec(start_url: str = START, **kwargs: Any) -> CrawlSpec:
    return CrawlSpec(start_url=start_url, **kwargs)


def urls(
    links: Iterable[str], crawl: CrawlSpec, *, page_url: str = START, depth: int = 0
) -> list[str]:
    found = next_candidates(links, page_url=page_url, page_depth=depth, crawl=crawl)
    return [candidate.url for candidate in found]


# -- crawl_key ----------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("url", "key"),
    [
        ("https://Example.COM/a#frag", "https://example.com/a"),
        ("HTTPS://example.com:443", "https://example.com/"),
        ("http://example.com:80/a/./b/../c?q=1&a=2#x", "http://example.com/a/c?q=1&a=2"),
        ("https://bücher.de/straße", "https://xn--bcher-kva.de/stra%C3%9Fe"),
        ("https://example.com/a b", "https://example.com/a%20b"),
    ],
)
def test_crawl_key(url: str, key: str) -> None:
    assert crawl_key(url) == key
    assert crawl_key(key) == key


@pytest.mark.parametrize("url", ["mailto:a@example.com", "ftp://example.com/", "/relative", ""])
def test_crawl_key_rejects_non_http(url: str) -> None:
    with pytest.raises(ValueError):
        crawl_key(url)


# -- depth ----------------------------------------------------------------------------------


def test_children_are_one_level_deeper() -> None:
    found = next_candidates(
        ["https://example.com/a"], page_url=START, page_depth=1, crawl=spec(max_depth=3)
    )
    assert found == [CrawlCandidate(url="https://example.com/a", depth=2)]


def test_depth_limit() -> None:
    crawl = spec(max_depth=2)
    assert urls(["https://example.com/a"], crawl, depth=1) == ["https://example.com/a"]
    assert urls(["https://example.com/a"], crawl, depth=2) == []
    assert urls(["https://example.com/a"], crawl, depth=5) == []
    assert urls(["https://example.com/a"], spec(max_depth=0), depth=0) == []


# -- schemes ----------------------------------------------------------------------------------


def test_only_http_links_are_followed() -> None:
    links = [
        "mailto:someone@example.com",
        "javascript:alert(1)",
        "ftp://example.com/file",
        "tel:+123",
        "data:text/html,hi",
        "/relative/path",
        "https://example.com/ok",
    ]
    assert urls(links, spec()) == ["https://example.com/ok"]


def test_both_schemes_are_followed_on_the_same_host() -> None:
    links = ["http://example.com/a", "https://example.com/a"]
    assert urls(links, spec()) == links
    assert urls(links, spec("http://example.com/")) == links


def test_credentials_and_overlong_urls_are_dropped() -> None:
    links = ["https://user:pw@example.com/a", "https://example.com/" + "a" * 2100]
    assert urls(links, spec()) == []


# -- hosts ------------------------------------------------------------------------------------


HOST_LINKS = [
    "https://example.com/same",
    "https://www.example.com/sub",
    "https://a.b.example.com/deep",
    "https://evil-example.com/x",
    "https://example.com.evil.net/x",
    "https://notexample.com/x",
    "https://other.org/x",
    "https://com/x",
]


def test_exact_host_only_by_default() -> None:
    assert urls(HOST_LINKS, spec()) == ["https://example.com/same"]


def test_subdomains_when_allowed() -> None:
    assert urls(HOST_LINKS, spec(allow_subdomains=True)) == [
        "https://example.com/same",
        "https://www.example.com/sub",
        "https://a.b.example.com/deep",
    ]


def test_parent_domain_is_not_a_subdomain() -> None:
    crawl = spec("https://www.example.com/", allow_subdomains=True)
    assert urls(["https://example.com/", "https://x.www.example.com/"], crawl) == [
        "https://x.www.example.com/"
    ]


def test_host_case_trailing_dot_and_idna() -> None:
    links = ["https://EXAMPLE.com/upper", "https://example.com./dot"]
    assert urls(links, spec()) == ["https://example.com/upper", "https://example.com./dot"]
    idna = spec("https://BÜCHER.de/")
    assert urls(["https://bücher.de/a", "https://xn--bcher-kva.de/b"], idna) == [
        "https://xn--bcher-kva.de/a",
        "https://xn--bcher-kva.de/b",
    ]


def test_ip_address_has_no_subdomains() -> None:
    crawl = spec("http://10.0.0.1/", allow_subdomains=True)
    assert urls(["http://10.0.0.1/a", "http://5.10.0.0.1/b"], crawl) == ["http://10.0.0.1/a"]


def test_ports() -> None:
    links = [
        "https://example.com:443/default",
        "http://example.com:80/default-http",
        "https://example.com:8443/other",
        "http://example.com:443/odd",
    ]
    assert urls(links, spec()) == [
        "https://example.com/default",
        "http://example.com/default-http",
    ]
    assert urls(links, spec("https://example.com:8443/")) == ["https://example.com:8443/other"]


# -- include / exclude ------------------------------------------------------------------------


def test_include_matches_the_path_only() -> None:
    crawl = spec(include=[r"^/blog/"])
    links = [
        "https://example.com/blog/post",
        "https://example.com/shop?next=/blog/",
        "https://example.com/about",
    ]
    assert urls(links, crawl) == ["https://example.com/blog/post"]


def test_any_include_suffices() -> None:
    crawl = spec(include=[r"^/blog/", r"\.html$"])
    links = ["https://example.com/blog/a", "https://example.com/x.html", "https://example.com/x"]
    assert urls(links, crawl) == links[:2]


def test_exclude_wins() -> None:
    crawl = spec(include=[r"^/blog/"], exclude=[r"/tag/", r"\.pdf$"])
    links = [
        "https://example.com/blog/post",
        "https://example.com/blog/tag/python",
        "https://example.com/blog/paper.pdf",
        "https://example.com/blog/paper.pdf?x=tag/",
    ]
    assert urls(links, crawl) == [links[0]]


def test_query_is_ignored_by_patterns() -> None:
    crawl = spec(exclude=[r"print"])
    links = ["https://example.com/page?print=1", "https://example.com/print"]
    assert urls(links, crawl) == ["https://example.com/page?print=1"]


def test_patterns_see_the_normalised_path() -> None:
    crawl = spec(include=[r"^/caf%C3%A9$"])
    assert urls(["https://example.com/café"], crawl) == ["https://example.com/caf%C3%A9"]


def test_overlong_paths_are_not_examined() -> None:
    crawl = spec(exclude=[r"^(a+)+$"])
    ok = "https://example.com/" + "b" * (MAX_FILTERED_PATH_LENGTH - 1)
    too_long = "https://example.com/" + "b" * MAX_FILTERED_PATH_LENGTH
    assert urls([ok, too_long], crawl) == [ok]


def test_filter_from_spec() -> None:
    crawl_filter = CrawlFilter.from_spec(spec(include=[r"^/docs"], allow_subdomains=True))
    assert crawl_filter.admits("https://docs.example.com/docs/x#y")
    assert crawl_filter.admits("http://EXAMPLE.com/docs")
    assert not crawl_filter.admits("https://example.com/blog")
    assert not crawl_filter.admits("mailto:x@example.com")
    assert not crawl_filter.admits("https://evil-example.com/docs")


# -- dedupe, fragments, bounds ----------------------------------------------------------------


def test_dedupe_and_fragments() -> None:
    links = [
        "https://example.com/a#one",
        "https://example.com/b",
        "https://example.com/a#two",
        "https://EXAMPLE.com:443/a",
        "https://example.com/b/../a",
        "https://example.com/c",
    ]
    assert urls(links, spec()) == [
        "https://example.com/a",
        "https://example.com/b",
        "https://example.com/c",
    ]


def test_the_page_itself_is_not_a_candidate() -> None:
    links = ["https://example.com/page#top", "https://example.com/other"]
    assert urls(links, spec(), page_url="https://example.com/page") == ["https://example.com/other"]


def test_max_pages_bounds_the_result() -> None:
    links = [f"https://example.com/p{index}" for index in range(50)]
    assert urls(links, spec(max_pages=5)) == links[:5]
    rejected_first = ["https://other.org/x"] * 10 + links
    assert urls(rejected_first, spec(max_pages=3)) == links[:3]


def test_links_are_consumed_lazily_up_to_the_bound() -> None:
    consumed: list[int] = []

    def generate() -> Iterator[str]:
        for index in range(1000):
            consumed.append(index)
            yield f"https://example.com/p{index}"

    assert len(urls(generate(), spec(max_pages=2))) == 2
    assert len(consumed) == 2


# -- a section of the site, queries ---------------------------------------------------------


def test_under_the_start_path_only_that_section_is_followed() -> None:
    crawl = spec("https://example.com/docs", under_start_path=True)
    links = [
        "https://example.com/docs/intro",
        "https://example.com/docs",
        "https://example.com/blog/post",
        "https://example.com/",
    ]
    assert urls(links, crawl, page_url="https://example.com/docs/x") == links[:2]
    whole_site = urls(links, spec("https://example.com/docs"))  # by default (not the page itself)
    assert whole_site == links[:3]


def test_ignoring_queries_makes_urls_that_differ_only_in_them_one_page() -> None:
    crawl = spec(ignore_query=True)
    links = [
        "https://example.com/a?page=1",
        "https://example.com/a?page=2",
        "https://example.com/b",
        "https://example.com/?ref=nav",  # the page itself, without its query
    ]
    assert urls(links, crawl) == ["https://example.com/a", "https://example.com/b"]
    assert len(urls(links, spec())) == 4
