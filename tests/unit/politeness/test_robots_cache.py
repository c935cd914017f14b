"""robots.txt is read with the site's certificate verified (rules read over a connection
anyone could answer would steer the fetches); a job that fetches unverified reads its own, and
those never serve a job that verifies."""

from __future__ import annotations

from scrapejobs_shared.politeness.robots_cache import RobotsCache
from scrapejobs_shared.ports.fetcher import FetchRequest, FetchResponse, FetchRoute


class Recording:
    def __init__(self) -> None:
        self.requests: list[FetchRequest] = []

    async def fetch(self, request: FetchRequest) -> FetchResponse:
        self.requests.append(request)
        body = b"User-agent: *\nDisallow: /private\n"
        return FetchResponse(request.url, 200, {"content-type": "text/plain"}, body, 1)


async def test_robots_txt_is_read_verified_and_cached_apart_from_unverified_reads() -> None:
    fetcher = Recording()
    cache = RobotsCache(fetcher)
    assert not (await cache.rules_for("https://a.example/private")).allows(
        "https://a.example/private", "scrapejobs"
    )
    await cache.rules_for("https://a.example/other")  # cached
    assert [r.route.verify_tls for r in fetcher.requests] == [True]
    unverified = FetchRoute(verify_tls=False)
    await cache.rules_for("https://a.example/x", unverified)  # a job's own choice
    await cache.rules_for("https://a.example/y", unverified)
    await cache.rules_for("https://a.example/z")  # still the verified read
    assert [r.route.verify_tls for r in fetcher.requests] == [True, False]


async def test_a_failing_certificate_reads_as_no_rules_so_the_page_fails_for_its_reason() -> None:
    from scrapejobs_shared.ports.fetcher import PermanentFetchError

    class BadCertificate:
        async def fetch(self, request: FetchRequest) -> FetchResponse:
            raise PermanentFetchError("certificate verify failed", reason="tls_error")

    rules = await RobotsCache(BadCertificate()).rules_for("https://self-signed.example/p")
    assert rules.allows("https://self-signed.example/p", "scrapejobs")


async def test_robots_txt_is_read_through_the_job_s_proxies_and_kept_per_route() -> None:
    """A site may answer one route and not another: the job's robots.txt comes the way its
    pages do."""
    from scrapejobs_shared.options.proxy_pools import ProxyChoice

    fetcher = Recording()
    cache = RobotsCache(fetcher)
    german = ProxyChoice("basic", "DE")
    await cache.rules_for("https://a.example/a", FetchRoute(proxy=german, session="job-1"))
    await cache.rules_for("https://a.example/b", FetchRoute(proxy=german, session="job-2"))
    await cache.rules_for("https://a.example/c")
    assert [r.route.proxy for r in fetcher.requests] == [german, None]
    # a tenant's own pool is its own route; going direct, whose job it is makes no difference
    await cache.rules_for("https://a.example/d", FetchRoute(proxy=german, tenant="acme"))
    await cache.rules_for("https://a.example/e", FetchRoute(tenant="acme"))
    assert [r.route.tenant for r in fetcher.requests] == [None, None, "acme"]
