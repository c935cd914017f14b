"""robots.txt (RFC 9309) rules, via Protego, and what a robots.txt fetch outcome implies."""

from __future__ import annotations

import pytest

from scrapejobs_shared.politeness.robots_rules import (
    MAX_ROBOTS_BYTES,
    ROBOTS_CACHE_TTL_S,
    RobotsRules,
    product_token,
    rules_for_response,
)

UA = "scrapejobs/0.1 (+https://scrapejobs.example/bot)"
SITE = "https://example.com"


def rules(text: str) -> RobotsRules:
    return RobotsRules.parse(text.encode())


def test_cache_ttl_is_a_day() -> None:
    assert ROBOTS_CACHE_TTL_S == 86400


@pytest.mark.parametrize(
    ("user_agent", "token"),
    [
        (UA, "scrapejobs"),
        ("ScrapeJobs/2", "scrapejobs"),
        ("my_bot-x/1.0", "my_bot-x"),
        ("  scrapejobs", "scrapejobs"),
        ("(compatible)", ""),
    ],
)
def test_product_token(user_agent: str, token: str) -> None:
    assert product_token(user_agent) == token


# -- fetch outcomes -----------------------------------------------------------------------

BODY = b"User-agent: *\nDisallow: /private\n"


@pytest.mark.parametrize("status", [400, 401, 403, 404, 410, 451, 301, 302, 308])
def test_unavailable_allows_everything(status: int) -> None:
    verdict = rules_for_response(status, BODY)
    assert verdict.allows(f"{SITE}/private", UA)
    assert verdict.crawl_delay(UA) is None


@pytest.mark.parametrize("status", [None, 429, 500, 502, 503, 599, 600, 100])
def test_unreachable_disallows_everything(status: int | None) -> None:
    verdict = rules_for_response(status, BODY)
    assert not verdict.allows(f"{SITE}/", UA)
    assert not verdict.allows(f"{SITE}/public", UA)
    assert verdict.crawl_delay(UA) is None


@pytest.mark.parametrize("status", [200, 203, 299])
def test_success_parses_the_body(status: int) -> None:
    verdict = rules_for_response(status, BODY)
    assert not verdict.allows(f"{SITE}/private/x", UA)
    assert verdict.allows(f"{SITE}/public", UA)


def test_robots_txt_itself_is_always_allowed() -> None:
    assert RobotsRules.disallow_all().allows(f"{SITE}/robots.txt", UA)
    assert rules("User-agent: *\nDisallow: /\n").allows(f"{SITE}/robots.txt", UA)
    assert not rules("User-agent: *\nDisallow: /\n").allows(f"{SITE}/robots.txt.bak", UA)


def test_empty_body_allows_everything() -> None:
    assert RobotsRules.parse(b"").allows(f"{SITE}/anything", UA)
    assert RobotsRules.allow_all().allows(f"{SITE}/anything", UA)


# -- matching -----------------------------------------------------------------------------


def test_wildcards() -> None:
    verdict = rules("User-agent: *\nDisallow: /*.pdf$\nDisallow: /tmp/*/cache\n")
    assert not verdict.allows(f"{SITE}/docs/report.pdf", UA)
    assert verdict.allows(f"{SITE}/docs/report.pdf?download=1", UA)
    assert verdict.allows(f"{SITE}/docs/report.pdf.html", UA)
    assert not verdict.allows(f"{SITE}/tmp/a/b/cache/x", UA)
    assert verdict.allows(f"{SITE}/tmp/cache", UA)


def test_dollar_anchor_alone() -> None:
    verdict = rules("User-agent: *\nDisallow: /$\n")
    assert not verdict.allows(f"{SITE}/", UA)
    assert verdict.allows(f"{SITE}/page", UA)


def test_longest_match_wins() -> None:
    verdict = rules("User-agent: *\nDisallow: /shop\nAllow: /shop/public\n")
    assert not verdict.allows(f"{SITE}/shop", UA)
    assert not verdict.allows(f"{SITE}/shop/cart", UA)
    assert verdict.allows(f"{SITE}/shop/public/item", UA)
    reverse = rules("User-agent: *\nAllow: /shop\nDisallow: /shop/private\n")
    assert reverse.allows(f"{SITE}/shop/x", UA)
    assert not reverse.allows(f"{SITE}/shop/private/x", UA)


def test_equal_length_allow_wins() -> None:
    for text in (
        "User-agent: *\nDisallow: /page\nAllow: /page\n",
        "User-agent: *\nAllow: /page\nDisallow: /page\n",
    ):
        assert rules(text).allows(f"{SITE}/page", UA)


def test_our_group_overrides_the_star_group() -> None:
    text = (
        "User-agent: *\nDisallow: /\n\n"
        "User-agent: scrapejobs\nDisallow: /private\n\n"
        "User-agent: otherbot\nDisallow: /public\n"
    )
    verdict = rules(text)
    assert verdict.allows(f"{SITE}/public", UA)
    assert not verdict.allows(f"{SITE}/private", UA)
    assert not verdict.allows(f"{SITE}/public", "otherbot/1.0")
    assert not verdict.allows(f"{SITE}/public", "somebot/1.0")


def test_star_group_applies_without_our_group() -> None:
    verdict = rules("User-agent: otherbot\nDisallow: /\n\nUser-agent: *\nDisallow: /x\n")
    assert verdict.allows(f"{SITE}/y", UA)
    assert not verdict.allows(f"{SITE}/x", UA)


def test_no_applicable_group_allows_everything() -> None:
    verdict = rules("User-agent: otherbot\nDisallow: /\n")
    assert verdict.allows(f"{SITE}/x", UA)


def test_user_agent_matching_is_case_insensitive() -> None:
    verdict = rules("User-agent: *\nDisallow: /\n\nUSER-AGENT: ScrapeJobs\nDisallow: /no\n")
    assert verdict.allows(f"{SITE}/yes", UA)
    assert not verdict.allows(f"{SITE}/no", "SCRAPEJOBS/9")


def test_a_prefix_of_our_token_is_not_our_group() -> None:
    verdict = rules("User-agent: scrape\nDisallow: /\n\nUser-agent: *\nDisallow: /x\n")
    assert verdict.allows(f"{SITE}/y", UA)
    assert not verdict.allows(f"{SITE}/x", UA)


def test_our_token_inside_the_header_does_not_select_other_groups() -> None:
    # The full UA mentions "example": only the product token is matched.
    verdict = rules("User-agent: example\nDisallow: /\n")
    assert verdict.allows(f"{SITE}/x", UA)


def test_groups_for_our_token_are_merged() -> None:
    text = (
        "User-agent: scrapejobs\nDisallow: /a\n\n"
        "User-agent: *\nDisallow: /\n\n"
        "User-agent: scrapejobs\nDisallow: /b\n"
    )
    verdict = rules(text)
    assert not verdict.allows(f"{SITE}/a", UA)
    assert not verdict.allows(f"{SITE}/b", UA)
    assert verdict.allows(f"{SITE}/c", UA)


def test_shared_group_lines() -> None:
    verdict = rules("User-agent: otherbot\nUser-agent: scrapejobs\nDisallow: /shared\n")
    assert not verdict.allows(f"{SITE}/shared", UA)


def test_crawl_delay_for_our_group_and_for_star() -> None:
    ours = rules("User-agent: *\nCrawl-delay: 10\n\nUser-agent: scrapejobs\nCrawl-delay: 2.5\n")
    assert ours.crawl_delay(UA) == 2.5
    assert ours.crawl_delay("otherbot") == 10.0
    star = rules("User-agent: *\nCrawl-delay: 4\nDisallow: /x\n")
    assert star.crawl_delay(UA) == 4.0
    assert rules("User-agent: *\nDisallow: /x\n").crawl_delay(UA) is None
    assert rules("User-agent: *\nCrawl-delay: soon\n").crawl_delay(UA) is None


def test_percent_encoding_equivalence() -> None:
    encoded_rule = rules("User-agent: *\nDisallow: /a%3cb\n")
    assert not encoded_rule.allows(f"{SITE}/a<b", UA)
    assert not encoded_rule.allows(f"{SITE}/a%3Cb", UA)
    plain_rule = rules("User-agent: *\nDisallow: /a<b\n")
    assert not plain_rule.allows(f"{SITE}/a%3cb", UA)
    utf8_rule = rules("User-agent: *\nDisallow: /café\n")
    assert not utf8_rule.allows(f"{SITE}/caf%C3%A9", UA)


def test_comments_bom_and_crlf() -> None:
    body = b"\xef\xbb\xbfUser-agent: * # everyone\r\nDisallow: /x # not x\r\n"
    verdict = RobotsRules.parse(body)
    assert not verdict.allows(f"{SITE}/x", UA)
    assert verdict.allows(f"{SITE}/y", UA)


def test_invalid_utf8_is_replaced() -> None:
    verdict = RobotsRules.parse(b"User-agent: *\nDisallow: /\xff\xfe\nDisallow: /x\n")
    assert not verdict.allows(f"{SITE}/x", UA)
    assert verdict.allows(f"{SITE}/y", UA)


def test_huge_robots_txt_parses_the_first_500_kib() -> None:
    head = b"User-agent: *\nDisallow: /early\n"
    filler = b"# padding padding padding padding padding padding padding\n"
    padding = filler * (MAX_ROBOTS_BYTES // len(filler))
    tail = b"Disallow: /late\n"
    body = head + padding + tail + filler * 10_000  # > 1 MB in all
    assert len(body) > 1_000_000
    verdict = RobotsRules.parse(body)
    assert not verdict.allows(f"{SITE}/early", UA)
    assert verdict.allows(f"{SITE}/late", UA)


def test_a_rule_cut_by_the_limit_is_ignored() -> None:
    head = b"User-agent: *\n"
    padding = b"#" * (MAX_ROBOTS_BYTES - len(head) - 12) + b"\n"
    body = head + padding + b"Disallow: /private-area\n"
    # Only "Disallow: /" of the last line is within the limit: read as such it would
    # block everything, so the partial line is dropped.
    assert len(head + padding + b"Disallow: /") == MAX_ROBOTS_BYTES
    assert RobotsRules.parse(body).allows(f"{SITE}/public", UA)


def test_rules_are_value_objects() -> None:
    assert RobotsRules.allow_all() == RobotsRules.allow_all()
    assert RobotsRules.allow_all() != RobotsRules.disallow_all()


class NoProtego:
    """Stands in for Protego where the rules must not need it."""

    def can_fetch(self, url: str, agent: str) -> bool:
        raise AssertionError("Protego asked about a URL")

    def crawl_delay(self, agent: str) -> float | None:
        raise AssertionError("Protego asked for a delay")


def test_a_file_without_disallow_rules_allows_every_path_without_protego() -> None:
    text = "# ok\nUser-agent: *\nAllow: /\nDisallow:\nSitemap: https://example.com/s.xml\n"
    parsed = rules(text)
    assert not parsed.restricts
    bare = RobotsRules(parser=NoProtego(), agents=parsed.agents, restricts=False)  # type: ignore[arg-type]
    assert bare.allows(f"{SITE}/any/path?q=1", UA)


SPELLINGS = ["Disallow", "DISALLOW", "Dissallow", "Disalow", "dissalow", "diasllow", "disallaw"]


@pytest.mark.parametrize("directive", SPELLINGS)
def test_any_spelling_of_a_disallow_rule_that_protego_reads_keeps_the_check(directive: str) -> None:
    parsed = rules(f"User-agent: *\n{directive}: /private\n")
    assert parsed.restricts
    assert parsed.allows(f"{SITE}/public", UA)
    assert not parsed.allows(f"{SITE}/private/x", UA)


def test_crawl_delay_is_asked_once_per_agent() -> None:
    parsed = rules("User-agent: *\nCrawl-delay: 3\n")
    assert parsed.crawl_delay(UA) == 3.0
    object.__setattr__(parsed, "parser", NoProtego())
    assert parsed.crawl_delay(UA) == 3.0  # from the first answer
