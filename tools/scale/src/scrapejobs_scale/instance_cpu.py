"""A worker instance's CPU on the simulated clock: each page it fetches then costs it
``page_cpu_s`` of its one vCPU (Terraform's ``worker_cpu`` default), pages in turn, so an
instance serves at most ``1 / page_cpu_s`` pages a second however many requests it holds
(what bounds an instance in production: ``make bench`` measures a page's CPU). Without it
simulated pages cost no time but their sites' latency, and 200 instances drained a million
URLs in 2 simulated seconds: too short to tell how pages a second grow with instances."""

from __future__ import annotations

import asyncio
from collections.abc import Callable

from scrapejobs_shared.ports.fetcher import Fetcher, FetchRequest, FetchResponse

PAGE_CPU_S = 0.004  # the worker's CPU a page: 3 to 5 ms in make bench (bench/README.md)


class InstanceCpu:
    """The fetcher port of one instance: the shared simulated sites, then the page's CPU."""

    def __init__(self, sites: Fetcher, now: Callable[[], float], page_cpu_s: float) -> None:
        self._sites = sites
        self._now = now
        self._page_cpu_s = page_cpu_s
        self._busy_until = 0.0
        self.busy_s = 0.0  # CPU spent

    async def fetch(self, request: FetchRequest) -> FetchResponse:
        response = await self._sites.fetch(request)
        if self._page_cpu_s:
            now = self._now()
            self._busy_until = max(now, self._busy_until) + self._page_cpu_s
            self.busy_s += self._page_cpu_s
            await asyncio.sleep(self._busy_until - now)
        return response

    async def aclose(self) -> None:
        return None
