"""The simulated sites count a host's request starts by tenth of a second: a start on a
tenth's edge, reached by a clock that adds float steps, counts in the tenth it starts."""

from __future__ import annotations

import asyncio

from scrapejobs_scale.sites import SimulatedSites
from scrapejobs_shared.ports.fetcher import FetchRequest


def test_starts_on_a_tenth_s_edge_count_in_that_tenth() -> None:
    now = [0.0]
    sites = SimulatedSites(lambda: now[0], latency_s=lambda host: 0.0)

    async def fifty_a_second_for(seconds: int) -> None:
        for n in range(50 * seconds):
            await sites.fetch(FetchRequest(f"https://busy.example/p/{n}"))
            now[0] += 0.02  # as the simulated clock moves: 0.1 ten times is 0.9999999999999999

    asyncio.run(fifty_a_second_for(40))
    assert sum(sites.starts["busy.example"].values()) == 2_000
    assert sites.peak_rps("busy.example") == 50.0
