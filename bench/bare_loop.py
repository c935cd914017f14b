"""Baselines: the same pages and the same extraction, without the platform around them.

* ``bare``: one pooled ``httpx.AsyncClient`` + ``parsel.Selector``, the selectors of
  :data:`catalog_site.FIELDS` applied by hand (the reference the goals are expressed against).
* ``bare aiohttp``: the same on one ``aiohttp.ClientSession`` (a labelled row: the worker's
  fetcher is on aiohttp, so this says what the client alone is worth).
* ``worker-path``: the worker's own code in-process, with no Pub/Sub, Firestore or HTTP server
  around it: ``build_fetcher(FetchPolicy(allowlist=("127.0.0.0/8",)))`` then the worker's
  extractor (``extract_outcome`` → ``extract_page`` + ``fit_result``). The difference between
  ``bare`` and ``worker-path`` is the cost of the SSRF-safe fetcher and the extraction engine;
  the difference between ``worker-path`` and the full stack is the cost of the platform.

CPU is the benchmark process's ``time.process_time()`` (all threads, user + system): the site
runs in another process, so it is not counted.
"""

from __future__ import annotations

import asyncio
import statistics
import time
from collections.abc import Awaitable, Callable, Iterator, Sequence
from dataclasses import asdict, dataclass, field
from typing import Any

import aiohttp
import httpx
from parsel import Selector

from bench.catalog_site import FIELDS, PRICE_CSS, PRICE_RE, SKU_XPATH, TAGS_CSS, TITLE_CSS

WARMUP_PAGES = 40  # per baseline loop, before its measured passes

Handler = Callable[[str], Awaitable[dict[str, Any]]]


class PerPage:
    """pages/s and CPU per 1,000 pages of a run with ``pages``, ``wall_s`` and ``cpu_s``."""

    pages: int
    wall_s: float
    cpu_s: float

    @property
    def pages_per_s(self) -> float:
        return self.pages / self.wall_s if self.wall_s > 0 else 0.0

    @property
    def cpu_s_per_1000(self) -> float:
        return self.cpu_s * 1000 / self.pages if self.pages else 0.0


@dataclass
class LoopFigures(PerPage):
    name: str
    concurrency: int
    pages: int
    wall_s: float
    cpu_s: float
    errors: int
    mismatches: int
    page_ms_p50: float
    page_ms_p95: float
    runs_wall_s: list[float] = field(default_factory=list)
    runs_cpu_s: list[float] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)

    def as_dict(self) -> dict[str, Any]:
        return {
            **asdict(self),
            "pages_per_s": round(self.pages_per_s, 2),
            "cpu_s_per_1000_pages": round(self.cpu_s_per_1000, 3),
        }


def percentile(values: Sequence[float], q: float) -> float:
    """Linear interpolation between closest ranks (``q`` in 0..100); 0 for no values."""
    if not values:
        return 0.0
    ordered = sorted(values)
    rank = (len(ordered) - 1) * q / 100
    low = int(rank)
    high = min(low + 1, len(ordered) - 1)
    return ordered[low] + (ordered[high] - ordered[low]) * (rank - low)


def latency_summary(seconds: Sequence[float]) -> dict[str, float | int]:
    """n, p50 and p95 in milliseconds."""
    ms = [s * 1000 for s in seconds]
    return {
        "n": len(ms),
        "p50_ms": round(percentile(ms, 50), 1),
        "p95_ms": round(percentile(ms, 95), 1),
    }


def _strip(value: str | None) -> str | None:
    return value.strip() if value is not None else None


def extract_bare(text: str) -> dict[str, Any]:
    """:data:`catalog_site.FIELDS` applied by hand with parsel (first match, stripped)."""
    selector = Selector(text=text)
    price = selector.css(PRICE_CSS).re_first(PRICE_RE)
    return {
        "title": _strip(selector.css(TITLE_CSS).get()),
        "price": float(price) if price is not None else None,
        "sku": _strip(selector.xpath(SKU_XPATH).get()),
        "tags": [tag.strip() for tag in selector.css(TAGS_CSS).getall()],
    }


async def _drive(
    handler: Handler,
    urls: Sequence[str],
    concurrency: int,
    expected: Callable[[str], dict[str, Any]],
) -> tuple[float, float, list[float], int, int]:
    """Run ``handler`` over ``urls`` with ``concurrency`` coroutines pulling from one iterator."""
    source: Iterator[str] = iter(urls)
    durations: list[float] = []
    errors = 0
    mismatches = 0

    async def runner() -> None:
        nonlocal errors, mismatches
        for url in source:
            started = time.perf_counter()
            try:
                data = await handler(url)
            except Exception:
                errors += 1
                continue
            durations.append((time.perf_counter() - started) * 1000)
            if data != expected(url):
                mismatches += 1

    cpu = time.process_time()
    wall = time.perf_counter()
    await asyncio.gather(*(runner() for _ in range(concurrency)))
    return (
        time.perf_counter() - wall,
        time.process_time() - cpu,
        durations,
        errors,
        mismatches,
    )


async def measure(
    name: str,
    handler: Handler,
    urls: Sequence[str],
    warmup: Sequence[str],
    concurrency: int,
    expected: Callable[[str], dict[str, Any]],
    repeats: int = 3,
    measuring: Callable[[bool], None] | None = None,
) -> LoopFigures:
    """One warm-up pass, then ``repeats`` measured passes: wall and CPU are the medians.
    ``measuring`` is told True right before the measured passes and False right after."""
    await _drive(handler, warmup, concurrency, expected)
    if measuring is not None:
        measuring(True)
    walls: list[float] = []
    cpus: list[float] = []
    durations: list[float] = []
    errors = mismatches = 0
    for _ in range(repeats):
        wall, cpu, run_durations, run_errors, run_mismatches = await _drive(
            handler, urls, concurrency, expected
        )
        walls.append(wall)
        cpus.append(cpu)
        durations += run_durations
        errors += run_errors
        mismatches += run_mismatches
    if measuring is not None:
        measuring(False)
    return LoopFigures(
        name=name,
        concurrency=concurrency,
        pages=len(urls),
        wall_s=statistics.median(walls),
        cpu_s=statistics.median(cpus),
        errors=errors,
        mismatches=mismatches,
        page_ms_p50=percentile(durations, 50),
        page_ms_p95=percentile(durations, 95),
        runs_wall_s=[round(w, 3) for w in walls],
        runs_cpu_s=[round(c, 3) for c in cpus],
    )


async def bare_loop(
    urls: Sequence[str],
    warmup: Sequence[str],
    concurrency: int,
    expected: Callable[[str], dict[str, Any]],
    repeats: int = 3,
    measuring: Callable[[bool], None] | None = None,
) -> LoopFigures:
    limits = httpx.Limits(max_connections=concurrency, max_keepalive_connections=concurrency)
    async with httpx.AsyncClient(limits=limits, timeout=30.0, trust_env=False) as client:

        async def handler(url: str) -> dict[str, Any]:
            response = await client.get(url)
            response.raise_for_status()
            return extract_bare(response.text)

        name = f"bare c={concurrency}"
        return await measure(name, handler, urls, warmup, concurrency, expected, repeats, measuring)


async def bare_aiohttp_loop(
    urls: Sequence[str],
    warmup: Sequence[str],
    concurrency: int,
    expected: Callable[[str], dict[str, Any]],
) -> LoopFigures:
    """``bare_loop`` on aiohttp: one session, ``concurrency`` connections, the same extraction."""
    connector = aiohttp.TCPConnector(limit=concurrency)
    timeout = aiohttp.ClientTimeout(total=30.0)
    async with aiohttp.ClientSession(connector=connector, timeout=timeout) as session:

        async def handler(url: str) -> dict[str, Any]:
            async with session.get(url) as response:
                response.raise_for_status()
                return extract_bare(await response.text())

        name = f"bare aiohttp c={concurrency}"
        return await measure(name, handler, urls, warmup, concurrency, expected)


async def worker_path_loop(
    urls: Sequence[str],
    warmup: Sequence[str],
    concurrency: int,
    expected: Callable[[str], dict[str, Any]],
) -> LoopFigures:
    """The worker's fetcher and extraction engine, in-process (imported lazily: the services
    are edited concurrently). ``extract_page`` + ``fit_result`` is what the worker's extractor
    runs per 2xx page."""
    from scrapejobs_shared.domain.jobspec import JobSpec
    from scrapejobs_shared.extraction import extract_page, fit_result
    from scrapejobs_shared.ports.fetcher import FetchRequest
    from scrapejobs_worker.fetching import FetchPolicy, build_fetcher

    fields = JobSpec.model_validate({"extract": FIELDS}).extract
    fetcher = build_fetcher(FetchPolicy(allowlist=("127.0.0.0/8",)))
    try:

        async def handler(url: str) -> dict[str, Any]:
            response = await fetcher.fetch(FetchRequest(url, {}, 30.0))
            if response.status != 200:
                raise RuntimeError(f"{url}: HTTP {response.status}")
            page = extract_page(
                response.body, content_type=response.content_type, url=response.url, fields=fields
            )
            data, _truncated = fit_result(page.data)
            return dict(data)

        name = f"worker-path c={concurrency}"
        figures = await measure(name, handler, urls, warmup, concurrency, expected)
    finally:
        await fetcher.aclose()
    figures.notes.append("worker SafeFetcher + extract_page/fit_result; no Pub/Sub, Firestore")
    return figures
