"""Origin keys for politeness state, and robots.txt locations."""

from __future__ import annotations

import pytest

from scrapejobs_shared.politeness.host_key import MAX_KEY_BYTES, host_key, robots_url


@pytest.mark.parametrize(
    ("url", "key"),
    [
        ("https://example.com/a?b#c", "https~example.com~443"),
        ("http://example.com/", "http~example.com~80"),
        ("HTTPS://Example.COM:443/x", "https~example.com~443"),
        ("http://example.com:8080/x", "http~example.com~8080"),
        ("https://example.com:80/", "https~example.com~80"),
        ("https://user:pw@example.com/", "https~example.com~443"),
        ("https://bücher.de/", "https~xn--bcher-kva.de~443"),
        ("http://[::1]:8080/", "http~::1~8080"),
        ("https://[2001:DB8::1]/", "https~2001:db8::1~443"),
        ("http://127.0.0.1/", "http~127.0.0.1~80"),
    ],
)
def test_host_key(url: str, key: str) -> None:
    assert host_key(url) == key


def test_scheme_and_port_are_part_of_the_key() -> None:
    keys = {host_key(url) for url in ("http://a.com/", "https://a.com/", "https://a.com:8443/")}
    assert len(keys) == 3


def test_key_is_a_valid_firestore_document_id() -> None:
    for url in ("https://example.com/a/b/c", "http://[::1]/", "https://xn--bcher-kva.de/"):
        key = host_key(url)
        assert "/" not in key
        assert key not in (".", "..")
        assert not (key.startswith("__") and key.endswith("__"))
        assert len(key.encode()) <= MAX_KEY_BYTES


def test_overlong_host_is_hashed() -> None:
    host = ".".join(["a" * 60] * 30)
    key = host_key(f"https://{host}/")
    assert key.startswith("https~sha256-")
    assert key.endswith("~443")
    assert len(key.encode()) <= MAX_KEY_BYTES
    assert key == host_key(f"https://{host.upper()}/x")


@pytest.mark.parametrize(
    "url", ["ftp://example.com/", "mailto:a@b.c", "/relative", "http:///x", ""]
)
def test_non_http_urls_are_rejected(url: str) -> None:
    with pytest.raises(ValueError):
        host_key(url)
    with pytest.raises(ValueError):
        robots_url(url)


@pytest.mark.parametrize(
    ("url", "robots"),
    [
        ("https://Example.com/a/b?c#d", "https://example.com/robots.txt"),
        ("http://example.com:80/x", "http://example.com/robots.txt"),
        ("http://example.com:8080/x", "http://example.com:8080/robots.txt"),
        ("https://example.com:80/x", "https://example.com:80/robots.txt"),
        ("https://user:pw@example.com/", "https://example.com/robots.txt"),
        ("http://[::1]:8080/x", "http://[::1]:8080/robots.txt"),
        ("https://bücher.de/", "https://xn--bcher-kva.de/robots.txt"),
    ],
)
def test_robots_url(url: str, robots: str) -> None:
    assert robots_url(url) == robots
