"""``proxy: auto``: a page turned away (a challenge, a 403, a 429) through the job's own route
is asked once more through the stealth pool of the same country; otherwise, or when that
cannot be had, the first answer stands."""

from __future__ import annotations

from scrapejobs_shared.options.proxy_pools import ProxyChoice
from scrapejobs_shared.ports.fetcher import (
    FetchRequest,
    FetchResponse,
    FetchRoute,
    ProxyUnavailable,
)
from scrapejobs_worker.tasks.proxy_escalation import through_stealth, turned_away

CHALLENGE = b"<html><head><title>Just a moment...</title></head><body>cf-chl</body></html>"


def _response(status: int, body: bytes = b"<html><body>page</body></html>") -> FetchResponse:
    return FetchResponse("https://a.example/", status, {"content-type": "text/html"}, body, 5)


class Recording:
    def __init__(self, answer: FetchResponse | Exception) -> None:
        self.answer = answer
        self.asked: list[FetchRequest] = []

    async def fetch(self, request: FetchRequest) -> FetchResponse:
        self.asked.append(request)
        if isinstance(self.answer, Exception):
            raise self.answer
        return self.answer

    async def aclose(self) -> None:
        return None


def test_what_is_turned_away() -> None:
    assert turned_away(_response(403)) and turned_away(_response(429))
    assert turned_away(_response(503, CHALLENGE))
    assert not turned_away(_response(200)) and not turned_away(_response(404))
    assert not turned_away(_response(500))


async def test_the_page_is_asked_again_through_the_stealth_pool_of_its_country() -> None:
    fetcher = Recording(_response(200))
    first = _response(403)
    route = FetchRoute(proxy=ProxyChoice("basic", "DE"), tenant="acme", session="job-1")
    request = FetchRequest("https://a.example/", timeout_s=20, route=route)

    answer = await through_stealth(fetcher, request, first, 12.5)

    assert answer.status == 200
    [again] = fetcher.asked
    assert again.route.proxy == ProxyChoice("stealth", "DE") and again.timeout_s == 12.5
    assert (again.route.tenant, again.route.session) == ("acme", "job-1")  # the same pools
    assert again.url == request.url


async def test_without_a_stealth_proxy_the_first_answer_stands() -> None:
    fetcher = Recording(ProxyUnavailable("no proxy serves stealth here"))
    first = _response(429)
    direct = FetchRequest("https://a.example/", timeout_s=20)

    assert await through_stealth(fetcher, direct, first, 10) is first
    assert fetcher.asked[0].route.proxy == ProxyChoice("stealth")
