"""URL resolution and normalisation used by formats and URL attributes."""

from __future__ import annotations

import pytest

from scrapejobs_shared.extraction.urls import normalize_http_url, resolve_url


@pytest.mark.parametrize(
    ("url", "normalised"),
    [
        ("HTTP://Example.COM:80/a/./b/../c?q=1 2#frag", "http://example.com/a/c?q=1%202"),
        ("https://x.example:443", "https://x.example/"),
        ("https://x.example:8443/é", "https://x.example:8443/%C3%A9"),
        ("http://[::1]:80/p", "http://[::1]/p"),
        ("http://münchen.example/", "http://xn--mnchen-3ya.example/"),
        ("http://x.example/%41%zz?b=2&a=1", "http://x.example/%41%zz?b=2&a=1"),
    ],
)
def test_normalisation(url, normalised):
    assert normalize_http_url(url) == normalised


@pytest.mark.parametrize(
    "url", ["ftp://x.example/", "mailto:a@b.example", "javascript:void(0)", "http:///x",
            "http://x.example:99999/", "relative/path"],
)  # fmt: skip
def test_non_http_or_invalid_urls_are_dropped(url):
    assert normalize_http_url(url) is None


def test_resolution_cleans_whitespace_and_handles_bad_references():
    assert resolve_url("https://a.example/d/p.html", " ../x\n.html ") == "https://a.example/x.html"
    assert resolve_url("https://a.example/", "http://[bad") == "http://[bad"
    assert resolve_url("https://a.example/d/", "") == "https://a.example/d/"
