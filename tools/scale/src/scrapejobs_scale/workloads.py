"""The workloads ``make scale`` runs, each on its own simulated deployment and clock, and what
each must hold: every page ends once (none lost, none counted twice in the job or the
outcome statistics), no host above its pace, and the documents the ledger saw.

``size`` scales every workload (1.0: the issue's figures; tests run them small)."""

from __future__ import annotations

import asyncio
import time
from collections import Counter
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, replace
from typing import Any

from scrapejobs_scale.document_ledger import LedgerReport
from scrapejobs_scale.garbage_collection import collected_less_often
from scrapejobs_scale.limited_ports import LimitedPorts
from scrapejobs_scale.simulation import (
    MAINTENANCE_EVERY_S,
    RECONCILE_PATH,
    Deployment,
    Simulation,
)
from scrapejobs_scale.sites import tree_links
from scrapejobs_scale.virtual_clock import VirtualClock, run_simulated
from scrapejobs_shared.domain.monitor_checks import FINISHED_CHECKS, CheckStatus
from scrapejobs_shared.domain.outcome_stats import FINISHED

JOB_URLS = 10_000  # the most a job takes (jobspec.MAX_URLS)
DRAIN_TIMEOUT_S = 6 * 3600.0


@dataclass(frozen=True)
class Outcome:
    """What one workload did, read from the twins after it drained."""

    name: str
    instances: int
    pages: int  # pages submitted (a crawl's: found)
    ended: int  # pages whose task ended (succeeded or failed)
    counted: int  # pages the jobs' counts say ended
    in_stats: int  # pages the outcome statistics counted
    simulated_s: float
    machine_s: float  # this machine's CPU seconds for the run
    ledger: LedgerReport
    fetches: int
    peak_host_rps: float  # the busiest host's busiest second
    host_rps_limit: float  # 0: none
    pushes: int
    redelivered: int
    lost_pushes: int
    refused_submissions: int = 0
    stalled: bool = False
    scheduler_failures: tuple[str, ...] = ()  # Cloud Scheduler's calls refused (reconcile, tick)

    @property
    def pages_per_s(self) -> float:
        return self.ended / self.simulated_s if self.simulated_s else 0.0

    @property
    def writes_per_page(self) -> float:
        return self.ledger.writes / self.pages if self.pages else 0.0

    @property
    def reads_per_page(self) -> float:
        return self.ledger.reads / self.pages if self.pages else 0.0

    @property
    def lost(self) -> int:
        return self.pages - self.ended

    @property
    def doubled(self) -> int:
        return max(0, self.counted - self.ended) + max(0, self.in_stats - self.ended)

    @property
    def polite(self) -> bool:
        return not self.host_rps_limit or self.peak_host_rps <= self.host_rps_limit


Drive = Callable[[Simulation], Awaitable[list[str]]]


@dataclass(frozen=True)
class Workload:
    name: str
    deployment: Deployment
    drive: Drive  # submits the work; the job ids to wait for
    host_rps_limit: float = 0.0
    wrap: Callable[[LimitedPorts], None] | None = None

    def run(self) -> Outcome:
        clock = VirtualClock()
        began = time.process_time()
        with collected_less_often():
            return run_simulated(self._run(clock, began), clock)

    async def _run(self, clock: VirtualClock, began: float) -> Outcome:
        async with Simulation(self.deployment, clock, wrap=self.wrap) as sim:
            started = clock.now_s
            job_ids = await self.drive(sim)
            await sim.drain(job_ids, DRAIN_TIMEOUT_S)
            took = clock.now_s - started
            outcome = await self._outcome(sim, job_ids, took, time.process_time() - began)
        # the statistics once every instance stopped (each writes what it has left)
        stats = sim.ports.twins.store.stats.values()
        return replace(outcome, in_stats=sum(t.count(s) for t in stats for s in FINISHED))

    async def _outcome(
        self, sim: Simulation, job_ids: list[str], took: float, machine_s: float
    ) -> Outcome:
        store = sim.ports.twins.store
        pages = ended = counted = 0
        for job_id in job_ids:
            counts = await store.count_tasks(job_id)
            counted += sum(counts.get(status, 0) for status in FINISHED)
            items = [
                item for batch in store.batches.get(job_id, {}).values() for item in batch.items
            ]
            pages += len(items)  # a crawl's: every page it found
            ended += sum(1 for item in items if item.status.terminal)
        sites = sim.sites
        peak = max((sites.peak_rps(host) for host in sites.starts), default=0.0)
        pushed = sim.pubsub.counts
        return Outcome(
            name=self.name,
            instances=self.deployment.workers,
            pages=pages,
            ended=ended,
            counted=counted,
            in_stats=0,
            simulated_s=took,
            machine_s=machine_s,
            ledger=sim.ledger.report(),
            fetches=sum(sites.fetched.values()),
            peak_host_rps=peak,
            host_rps_limit=self.host_rps_limit,
            pushes=pushed.pushes,
            redelivered=pushed.expired + pushed.nacked,
            lost_pushes=pushed.lost,
            refused_submissions=sim.refused_submissions,
            stalled=sim.stalled,
            scheduler_failures=tuple(sim.scheduler_failures),
        )


async def submit_urls(sim: Simulation, urls: list[str], **options: Any) -> list[str]:
    """``urls`` as jobs of at most ``JOB_URLS``, submitted a few at a time."""
    bodies = [{"urls": urls[n : n + JOB_URLS], **options} for n in range(0, len(urls), JOB_URLS)]
    ids: list[str] = []
    for n in range(0, len(bodies), 4):
        ids += await asyncio.gather(*(sim.submit(body) for body in bodies[n : n + 4]))
    return ids


def many_hosts(size: float, instances: int | None = None, page_cpu_s: float = 0.0) -> Workload:
    """1M URLs over 10,000 hosts from 200 worker instances (``size`` scales URLs and hosts;
    ``page_cpu_s``: each page's CPU on its instance, instance_cpu.py)."""
    urls, hosts = round(1_000_000 * size), max(1, round(10_000 * size))

    async def drive(sim: Simulation) -> list[str]:
        return await submit_urls(sim, [f"https://h{n % hosts}.example/p/{n}" for n in range(urls)])

    deployment = Deployment(workers=instances or 200, page_cpu_s=page_cpu_s)
    return Workload(f"{urls:,} URLs, {hosts:,} hosts", deployment, drive)


def one_busy_host(size: float, instances: int | None = None, rps: float = 50.0) -> Workload:
    """One host at ``per_host_rps`` 50, shared by every instance."""
    urls = max(100, round(100_000 * size))

    async def drive(sim: Simulation) -> list[str]:
        return await submit_urls(sim, [f"https://busy.example/p/{n}" for n in range(urls)])

    settings = {"per_host_rps": rps, "per_host_concurrency": 64}
    deployment = Deployment(workers=instances or 200, worker_settings=settings)
    return Workload(f"one host at {rps:g} req/s", deployment, drive, host_rps_limit=rps)


def lost_pushes(size: float, instances: int | None = None, loss: float = 0.1) -> Workload:
    """10% of pushes lost; reconcile (Cloud Scheduler's maintenance call, here every minute)
    finds the work."""
    urls, hosts = max(1_000, round(100_000 * size)), max(10, round(1_000 * size))

    async def drive(sim: Simulation) -> list[str]:
        return await submit_urls(sim, [f"https://l{n % hosts}.example/p/{n}" for n in range(urls)])

    maintenance = {**MAINTENANCE_EVERY_S, RECONCILE_PATH: 60.0}
    deployment = Deployment(workers=instances or 200, loss=loss, maintenance_s=maintenance)
    return Workload(f"{loss:.0%} of pushes lost", deployment, drive)


def one_crawl(size: float, instances: int | None = None) -> Workload:
    """A crawl of 10,000 pages of one site (every page links to 10 more)."""
    pages = max(100, round(10_000 * size))

    async def drive(sim: Simulation) -> list[str]:
        crawl = {"start_url": "https://site.example/p/0", "max_pages": pages, "max_depth": 20}
        return [await sim.submit({"crawl": crawl})]

    deployment = Deployment(workers=instances or 200, links=tree_links)
    return Workload(f"a crawl of {pages:,} pages", deployment, drive)


def many_tenants(size: float, instances: int | None = None, rate: int = 2_000) -> Workload:
    """1,000 tenants submitting one-URL jobs, ``rate`` jobs a second between them, for 30 s
    (``size`` scales the tenants and the seconds)."""
    tenants, seconds = max(2, round(1_000 * size)), max(1, round(30 * size))

    async def drive(sim: Simulation) -> list[str]:
        submitted: list[asyncio.Task[str]] = []
        step = 0.01  # submissions go out every 10 ms, ``rate`` a second in all
        for tick in range(round(seconds / step)):
            for k in range(round(rate * step)):
                n = tick * round(rate * step) + k
                url = f"https://t{n % tenants}.example/p/{n}"
                job = sim.submit({"urls": [url]}, tenant=n % tenants)
                submitted.append(asyncio.ensure_future(job))
            await asyncio.sleep(step)
        return list(await asyncio.gather(*submitted))

    deployment = Deployment(workers=instances or 200, dispatchers=20, tenants=tenants)
    return Workload(f"{tenants:,} tenants, {rate:,} jobs/s", deployment, drive)


def monitored_pages(size: float, instances: int | None = None) -> Workload:
    """100,000 pages watched by 100 monitors of 1,000 pages (10 tenants of 10 monitors), all
    checked at the top of every hour; two hours of checks (``size`` scales the monitors)."""
    monitors = max(1, round(100 * size))
    tenants = min(10, monitors)
    hours = 2

    async def drive(sim: Simulation) -> list[str]:
        for m in range(monitors):
            urls = [f"https://m{m}.example/p/{n}" for n in range(1_000)]
            body = {"name": f"watch {m}", "urls": urls, "schedule": {"cron": "0 * * * *"}}
            await sim.call("/v1/monitors", body, tenant=m % tenants)
        # the checks of the top of each hour (each monitor's spread over the hour's first
        # minutes), until every one has finished, or an hour past the last one's time
        checks = sim.ports.twins.monitor_checks.checks.values()
        await asyncio.sleep(hours * 3600)
        for _ in range(60):
            finished = [check for check in checks if check.status in FINISHED_CHECKS]
            if len(finished) >= monitors * hours:
                break
            await asyncio.sleep(60)
        by_status = Counter(str(check.status) for check in checks)
        if len(checks) != monitors * hours or by_status.keys() != {CheckStatus.COMPLETED}:
            raise RuntimeError(f"{dict(by_status)}: checks of {monitors} monitors in {hours} h")
        return sorted(sim.ports.twins.store.jobs)

    deployment = Deployment(workers=instances or 200, tenants=tenants)
    return Workload(f"{monitors * 1_000:,} pages monitored hourly", deployment, drive)


WORKLOADS: dict[str, Callable[[float, int | None], Workload]] = {
    "many-hosts": many_hosts,
    "one-host": one_busy_host,
    "lost-pushes": lost_pushes,
    "crawl": one_crawl,
    "tenants": many_tenants,
    "monitors": monitored_pages,
}
