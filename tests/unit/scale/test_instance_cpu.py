"""An instance's CPU in the simulation (instance_cpu.py): its pages take its one vCPU in turn,
so 100 pages fetched at once on one instance end 100 pages' CPU after their sites answer,
while another instance's pages run beside them; with no CPU a page costs its latency only."""

from __future__ import annotations

import asyncio

from scrapejobs_scale.instance_cpu import InstanceCpu
from scrapejobs_scale.sites import SimulatedSites
from scrapejobs_scale.virtual_clock import VirtualClock
from scrapejobs_shared.ports.fetcher import FetchRequest

from .simulated import simulated


def ends_of(page_cpu_s: float) -> list[tuple[float, float]]:
    """Two instances, each fetching 100 pages at once: each instance's first and last end."""

    async def main(clock: VirtualClock) -> list[tuple[float, float]]:
        sites = SimulatedSites(clock.monotonic, latency_s=lambda host: 0.05)
        began = clock.now_s

        async def fetch_all(instance: InstanceCpu) -> tuple[float, float]:
            ends: list[float] = []

            async def one(n: int) -> None:
                await instance.fetch(FetchRequest(f"https://a.example/p/{n}"))
                ends.append(round(clock.now_s - began, 6))

            await asyncio.gather(*(one(n) for n in range(100)))
            return min(ends), max(ends)

        instances = [InstanceCpu(sites, clock.monotonic, page_cpu_s) for _ in range(2)]
        return list(await asyncio.gather(*(fetch_all(i) for i in instances)))

    return simulated(main)


def test_an_instance_s_pages_take_its_cpu_in_turn_beside_another_instance_s() -> None:
    assert ends_of(0.004) == [(0.054, 0.45), (0.054, 0.45)]  # 50 ms, then 4 ms each in turn


def test_without_cpu_a_page_costs_its_site_s_latency_only() -> None:
    assert ends_of(0.0) == [(0.05, 0.05), (0.05, 0.05)]
