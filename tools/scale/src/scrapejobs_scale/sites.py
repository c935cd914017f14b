"""Simulated sites: the worker's fetcher port answered from memory after each host's latency on
the simulated clock, and every request start kept by host, so politeness can be checked."""

from __future__ import annotations

import asyncio
import math
from collections import Counter, defaultdict
from collections.abc import Callable
from dataclasses import dataclass, field
from urllib.parse import urlsplit

from scrapejobs_scale.busiest import busiest
from scrapejobs_shared.ports.fetcher import FetchRequest, FetchResponse

PAGE = (
    b"<html><head><title>Item %d</title></head><body><main><h1>Item %d</h1>"
    b"<p class='price'>$%d.00</p><p>A small simulated page.</p>%s</main></body></html>"
)
FAN_OUT = 10  # a crawled site: page n links to pages 10n+1 .. 10n+10


def tree_links(url: str) -> list[str]:
    """A site whose ``/p/{n}`` pages link to the next ``FAN_OUT`` pages: a crawl from
    ``/p/0`` finds every page, each once."""
    base, _, last = url.rpartition("/")
    if not last.isdigit():
        return []
    n = int(last)
    return [f"{base}/{FAN_OUT * n + k}" for k in range(1, FAN_OUT + 1)]


def tenth_of(at: float) -> int:
    """The tenth of a second ``at`` falls in, to the microsecond (the gate's times are
    microseconds; the simulated clock, adding float steps, is a hair off: 0.1 ten times is
    0.9999999999999999, and a start on a tenth's edge fell in the tenth before, one host at
    50 requests a second then read 51 in its busiest second)."""
    return math.floor(round(at * 10, 5))


@dataclass
class SimulatedSites:
    """``latency_s(host)``: how long a host takes to answer (default 50 ms)."""

    now: Callable[[], float]
    latency_s: Callable[[str], float] = lambda host: 0.05
    links: Callable[[str], list[str]] = lambda url: []
    starts: dict[str, Counter[int]] = field(default_factory=lambda: defaultdict(Counter))
    fetched: Counter[str] = field(default_factory=Counter)  # URL → times fetched

    async def fetch(self, request: FetchRequest) -> FetchResponse:
        host = urlsplit(request.url).hostname or ""
        if request.url.endswith("/robots.txt"):
            return FetchResponse(request.url, 404, {}, b"", elapsed_ms=1)
        self.starts[host][tenth_of(self.now())] += 1
        self.fetched[request.url] += 1
        latency = self.latency_s(host)
        await asyncio.sleep(latency)
        n = len(request.url)
        anchors = b"".join(
            b"<a href='%s'>more</a>" % link.encode() for link in self.links(request.url)
        )
        body = PAGE % (n, n, n % 97, anchors)
        headers = {"content-type": "text/html; charset=utf-8"}
        return FetchResponse(request.url, 200, headers, body, elapsed_ms=round(latency * 1000))

    async def aclose(self) -> None:
        return None

    def peak_rps(self, host: str, window_s: float = 1.0) -> float:
        """The most request starts ``host`` took in any ``window_s``, per second."""
        tenths = self.starts.get(host)
        if not tenths:
            return 0.0
        width = max(1, round(window_s * 10))
        return busiest(tenths, width) / (width / 10)
