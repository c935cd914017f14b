"""Full-stack benchmark against a bare httpx + parsel loop (``make bench``).

1. Starts the catalog site (bench/catalog_site.py) in its own process on a free loopback port.
2. Baselines in this process over the same N pages and extraction: a bare loop (one pooled
   httpx.AsyncClient + parsel) at concurrency 2 (what the Pub/Sub emulator pushes at once) and
   16, and the worker's own fetcher + extractor in-process at concurrency 2.
2b. Unless ``--skip-celery`` (or no redis-server): the Celery + Redis baseline
   (bench/celery_baseline.py): redis-server + a prefork x2 Celery worker, one task per URL.
3. Unless ``--skip-floors``: floor runs (bench/floors.py): the Pub/Sub emulator pushing N
   messages to the least possible worker (no-op; one Firestore commit; a read + two commits).
4. Unless ``--skip-stack``: the real stack (both emulators, dispatcher, worker) on free ports,
   one job of N URLs, then a 10,000-URL submission that is cancelled at once.
4b. Unless ``--skip-instructions`` (or no valgrind): instructions per page counted by callgrind
   (bench/instruction_counts.py): the bare c=2 loop, and the worker of a stack of its own.
4c. Unless ``--skip-workloads``: the other workload shapes with default options
   (bench/workloads.py), each beside Celery + Redis: B (N URLs over N/20 hosts), C (1,000
   one-URL jobs from 16 client threads), L (one one-URL job at a time, beside the Pub/Sub
   emulator's publish → push floor), R (rendered pages), M (plain pages beside a job whose
   ai stage waits 2 s on a loopback model), F (Firecrawl's batch API against /v1/jobs), T
   (tenants sharing a host) and K (a monitor's check of 1,000 unchanged pages against a plain
   job of them: bench/monitor_workload.py).
   The headline job (step 4) is workload A: N URLs of one host, default options.
5. Prints the figures side by side with the goals (throughput against Celery + Redis, worker
   CPU against the bare c=2 loop, Firestore operations per page, the 10,000-URL submission) and
   an estimated production cost per million pages (bench/costs.py); writes
   bench/results/latest.json.

Every process it starts is stopped by pid/process group, on success, error, timeout (``--timeout``,
exit 3) or Ctrl-C (exit 130). See bench/README.md.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import json
import os
import platform
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from datetime import UTC, datetime
from pathlib import Path
from types import FrameType
from typing import TYPE_CHECKING, Any

import psutil

from scrapejobs_devstack.processes import (
    stop_group,
)
from scrapejobs_devstack.processes import tail as log_tail

# Run as a script (`python bench/run_bench.py`): make the repository root importable so the
# bench modules are `bench.*` here as they are for mypy.
sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from bench.bare_loop import (
    WARMUP_PAGES,
    LoopFigures,
    bare_aiohttp_loop,
    bare_loop,
    worker_path_loop,
)
from bench.catalog_site import CATEGORY_EVERY, FIELDS, PRODUCTS, bench_paths, expected
from bench.celery_baseline import CeleryFigures, run_celery, unavailable
from bench.costs import estimate
from bench.document_workload import D_GOAL_BOOK_S, D_GOAL_RATIO
from bench.monitor_workload import K_GOAL_RATIO, K_GOAL_WRITES
from bench.ocr_workload import O_GOAL_CPU_S, O_GOAL_F1, O_GOAL_RATIO
from bench.proxy_workload import P_GOAL_RATIO
from bench.search_workload import S_GOAL_OVERHEAD_S
from bench.site_process import start_site
from bench.tenant_workload import T_GOAL_RATIO, T_PAGES
from bench.workloads import C_PAGES, URLS_PER_HOST

if TYPE_CHECKING:
    from scrapejobs_devstack.stack import Stack

BENCH_DIR = Path(__file__).resolve().parent
RESULTS = BENCH_DIR / "results" / "latest.json"
GOAL_THROUGHPUT_RATIO = 1.0  # A: end-to-end pages/s ÷ Celery + Redis pages/s, at least
STRETCH_THROUGHPUT_RATIO = 1.5
GOAL_CPU_RATIO = 1.5  # worker CPU per page ÷ bare c=2 loop CPU per page, at most
GOAL_INSTRUCTIONS_RATIO = 1.2  # worker instructions per page ÷ the bare c=2 loop's, at most
GOAL_B_RATIO = 1.2  # B (many hosts): pages/s ÷ Celery + Redis, at least
GOAL_C_RATIO = 0.5  # C (one-URL jobs): jobs/s ÷ Celery's tasks/s, at least (stretch 1.0)
GOAL_L_OVER_FLOOR_MS = 25.0  # L: one-URL job p50 - the emulator's publish → push p50, at most
GOAL_ONE_URL_WRITES = 3.0  # Firestore documents written per one-URL job, at most
GOAL_ONE_URL_READS = 0.5
GOAL_B_WRITES_PER_PAGE = 1.1
GOAL_B_READS_PER_PAGE = 0.1
GOAL_R_PAGES_PER_S = 8.0  # R: rendered pages/s of a light script-built page, at least
GOAL_R_ACTIONS_RATIO = 0.7  # R: with a 3-action script ÷ plain rendering, at least (issue 56)
GOAL_R_BROWSER_MB = 1500.0  # R: peak memory of all Chromium processes (RSS summed), at most
GOAL_M_PLAIN_RATIO = 0.9  # M: plain pages/s beside model work ÷ without it, at least
GOAL_F_RATIO = 0.95  # F: pages/s through /v2/batch/scrape ÷ through /v1/jobs, at least
GOAL_U_VS_RENDER = 2.0  # U: render "auto" pages/s ÷ render: true (10% script-built), at least
GOAL_WRITES_PER_PAGE = 1.25  # Firestore documents written per page (dispatcher + worker)
GOAL_READS_PER_PAGE = 0.1  # Firestore documents read per page
GOAL_BIG_ACCEPT_S = 1.5  # a 10,000-URL submission accepted (POST -> 202), at most
CELERY_TIMEOUT_S = 300.0
STACK_WARMUP_PAGES = 1000  # a first job: imports, connection pools, the emulators' JIT
BIG_SUBMISSION = 10_000


class BenchTimeout(BaseException):
    """The overall ``--timeout`` passed (a BaseException: ``except Exception`` won't eat it)."""


class Terminated(BaseException):
    """SIGTERM."""


class Cleanup:
    """Stop actions run last-in first-out, once, whatever happened."""

    def __init__(self) -> None:
        self._actions: list[tuple[str, Callable[[], None]]] = []

    def add(self, name: str, action: Callable[[], None]) -> None:
        self._actions.append((name, action))

    def run(self) -> None:
        while self._actions:
            name, action = self._actions.pop()
            try:
                action()
            except Exception as exc:
                print(f"warning: stopping {name} failed: {exc}", file=sys.stderr)


def stop_leftover_children() -> None:
    """Safety net: any child process we started and that is still alive (e.g. a service whose
    start was interrupted before ``Stack`` recorded it) is stopped by its process group."""
    for child in psutil.Process().children():
        with contextlib.suppress(psutil.Error, ProcessLookupError):
            if os.getpgid(child.pid) == child.pid:  # started with start_new_session=True
                stop_group(child.pid, timeout_s=5)
            else:
                child.terminate()
                child.wait(timeout=5)


def parse_args(argv: list[str] | None = None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description="scrapejobs full-stack benchmark")
    parser.add_argument("--pages", type=int, default=1000, help="URLs in the measured job")
    parser.add_argument("--skip-stack", action="store_true", help="no full-stack run")
    parser.add_argument("--skip-floors", action="store_true", help="no floor runs")
    parser.add_argument("--skip-celery", action="store_true", help="no Celery + Redis run")
    parser.add_argument(
        "--skip-workloads", action="store_true", help="no workloads B, C, L (bench/workloads.py)"
    )
    parser.add_argument(
        "--skip-instructions", action="store_true", help="no instruction counts (callgrind)"
    )
    parser.add_argument("--keep-logs", action="store_true", help="keep the stack's log dir")
    parser.add_argument("--timeout", type=float, default=1800.0, help="overall limit, seconds")
    parser.add_argument("--output", type=Path, default=RESULTS, help="JSON figures file")
    args = parser.parse_args(argv)
    if not 1 <= args.pages <= 10_000:
        parser.error("--pages must be within 1..10000")
    return args


async def run_baselines(
    site: str, paths: list[str], warmup: list[str], truth: dict[str, dict[str, Any]]
) -> list[LoopFigures]:
    urls = [site + p for p in paths]
    warm = [site + p for p in warmup]
    by_url = {site + p: value for p, value in truth.items()}
    figures = [
        await bare_loop(urls, warm, 2, by_url.__getitem__),
        await bare_loop(urls, warm, 16, by_url.__getitem__),
        # labelled: the bare loop on aiohttp, the worker fetcher's client
        await bare_aiohttp_loop(urls, warm, 2, by_url.__getitem__),
    ]
    try:  # c=16: as many in flight as a worker process with two batches' lanes
        for concurrency in (2, 16):
            figures.append(await worker_path_loop(urls, warm, concurrency, by_url.__getitem__))
    except ImportError as exc:  # the services are edited concurrently; informative only
        print(f"note: worker-path baseline skipped ({exc})", file=sys.stderr)
    return figures


def paired_bare_pass(
    site: str, paths: list[str], warmup: list[str], truth: dict[str, dict[str, Any]]
) -> Callable[[], float]:
    """One more pass of the bare c=2 loop (after its warm-up), for the full stack to run right
    before and after its measured jobs: its CPU-s per 1,000 pages."""
    urls = [site + p for p in paths]
    warm = [site + p for p in warmup]
    by_url = {site + p: value for p, value in truth.items()}

    def one_pass() -> float:
        figures = asyncio.run(bare_loop(urls, warm, 2, by_url.__getitem__, repeats=1))
        if figures.errors or figures.mismatches:
            raise RuntimeError(
                f"paired bare pass: {figures.errors} errors, {figures.mismatches} wrong"
            )
        return figures.cpu_s_per_1000

    return one_pass


def _goal(
    key: str,
    label: str,
    value: float | None,
    op: str,
    target: float,
    unit: str = "",
    stretch: float | None = None,
    missing: str = "",
) -> dict[str, Any]:
    """One goal: its measured value (None: not measured, ``missing`` says why), met or not."""
    met: bool | None = None
    stretch_met: bool | None = None
    if value is not None:
        met = value >= target if op == ">=" else value <= target
        if stretch is not None:
            stretch_met = value >= stretch if op == ">=" else value <= stretch
    return {
        "key": key,
        "label": label,
        "value": value,
        "op": op,
        "goal": target,
        "stretch": stretch,
        "unit": unit,
        "met": met,
        "stretch_met": stretch_met,
        "missing": missing if value is None else "",
    }


def goals(
    bare: LoopFigures,
    celery: CeleryFigures | None,
    stack: dict[str, Any] | None,
    instructions: dict[str, Any] | None = None,
    workloads: dict[str, Any] | None = None,
) -> dict[str, Any]:
    """The project's goals, each with its value from this run: end-to-end throughput against
    Celery + Redis, worker CPU per page against the bare c=2 loop (in CPU seconds, and in
    instructions), Firestore operations per page, the 10,000-URL submission's acceptance time."""
    no_stack = "no full-stack run"
    throughput = throughput_bare = cpu = None
    if stack:
        throughput_bare = round(stack["pages_per_s"] / bare.pages_per_s, 3)
        if celery and celery.pages_per_s:
            throughput = round(stack["pages_per_s"] / celery.pages_per_s, 3)
        if stack.get("worker_cpu_vs_paired_bare"):
            cpu = round(stack["worker_cpu_vs_paired_bare"], 2)
        elif bare.cpu_s_per_1000:
            cpu = round(stack["cpu_s_per_1000_pages"]["worker"] / bare.cpu_s_per_1000, 2)
    per_page = ((stack or {}).get("firestore_ops") or {}).get("per_page") or {}
    no_ops = "not in the services' logs" if stack else no_stack
    big = (stack or {}).get("big_submission") or {}
    items = [
        _goal(
            "throughput_vs_celery",
            "end-to-end pages/s ÷ Celery + Redis pages/s",
            throughput,
            ">=",
            GOAL_THROUGHPUT_RATIO,
            stretch=STRETCH_THROUGHPUT_RATIO,
            missing=no_stack if not stack else "no Celery + Redis run",
        ),
        _goal(
            "worker_cpu_vs_bare",
            f"worker CPU/page ÷ {bare.name} CPU/page (paired)"
            if (stack or {}).get("worker_cpu_vs_paired_bare")
            else f"worker CPU/page ÷ {bare.name} CPU/page",
            cpu,
            "<=",
            GOAL_CPU_RATIO,
            missing=no_stack,
        ),
        _goal(
            "worker_instructions_vs_bare",
            f"worker instructions/page ÷ {bare.name}'s (callgrind)",
            (instructions or {}).get("ratio"),
            "<=",
            GOAL_INSTRUCTIONS_RATIO,
            missing=(instructions or {}).get("skipped", no_stack),
        ),
        _goal(
            "firestore_writes_per_page",
            "Firestore writes per page",
            per_page.get("writes"),
            "<=",
            GOAL_WRITES_PER_PAGE,
            missing=no_ops,
        ),
        _goal(
            "firestore_reads_per_page",
            "Firestore reads per page",
            per_page.get("reads"),
            "<=",
            GOAL_READS_PER_PAGE,
            missing=no_ops,
        ),
        _goal(
            "big_submission_accept_s",
            f"{BIG_SUBMISSION:,}-URL submission accepted",
            big.get("accept_s"),
            "<=",
            GOAL_BIG_ACCEPT_S,
            unit="s",
            missing=no_stack,
        ),
        *workload_goals(workloads),
    ]
    return {
        "throughput_reference": celery.name if celery else None,
        "cpu_reference": bare.name,
        "throughput_vs_bare": throughput_bare,  # for information (the old goal was >= 0.5)
        "items": items,
    }


def workload_goals(workloads: dict[str, Any] | None) -> list[dict[str, Any]]:
    """Goals of workloads B, C, L, R, U, M, F, T, D, O, P and S (bench/workloads.py), all with
    default job options."""
    runs = workloads or {}
    ours, theirs = runs.get("scrapejobs") or {}, runs.get("celery") or {}
    missing = runs.get("skipped") or "no workloads run"
    no_celery = theirs.get("skipped") or missing

    def ratio(key: str, field: str) -> float | None:
        mine, base = (ours.get(key) or {}).get(field), (theirs.get(key) or {}).get(field)
        return round(mine / base, 3) if mine and base else None

    b_ops = (ours.get("B") or {}).get("firestore_per_page") or {}
    rendered = ours.get("R") or {}
    no_render = rendered.get("skipped") or missing
    modelled = ours.get("M") or {}
    auto = ours.get("U") or {}
    no_auto = auto.get("skipped") or missing
    c_ops = (ours.get("C") or {}).get("firestore_per_job") or {}
    latency, floor = ours.get("L") or {}, ours.get("push_floor") or {}
    over_floor = None
    if latency.get("p50_ms") is not None and floor.get("p50_ms") is not None:
        over_floor = round(latency["p50_ms"] - floor["p50_ms"], 1)
    return [
        _goal(
            "b_vs_celery",
            "B: 20 URLs a host, pages/s ÷ Celery",
            ratio("B", "pages_per_s"),
            ">=",
            GOAL_B_RATIO,
            missing=no_celery,
        ),
        _goal(
            "c_vs_celery",
            "C: one-URL jobs/s (16 clients) ÷ Celery",
            ratio("C", "jobs_per_s"),
            ">=",
            GOAL_C_RATIO,
            stretch=1.0,
            missing=no_celery,
        ),
        _goal(
            "l_over_floor_ms",
            "L: one-URL job p50 - publish→push p50",
            over_floor,
            "<=",
            GOAL_L_OVER_FLOOR_MS,
            unit="ms",
            missing=missing,
        ),
        _goal(
            "one_url_writes",
            "Firestore writes per one-URL job",
            c_ops.get("writes"),
            "<=",
            GOAL_ONE_URL_WRITES,
            missing=missing,
        ),
        _goal(
            "one_url_reads",
            "Firestore reads per one-URL job",
            c_ops.get("reads"),
            "<=",
            GOAL_ONE_URL_READS,
            missing=missing,
        ),
        _goal(
            "b_writes_per_page",
            "B: Firestore writes per page",
            b_ops.get("writes"),
            "<=",
            GOAL_B_WRITES_PER_PAGE,
            missing=missing,
        ),
        _goal(
            "b_reads_per_page",
            "B: Firestore reads per page",
            b_ops.get("reads"),
            "<=",
            GOAL_B_READS_PER_PAGE,
            missing=missing,
        ),
        _goal(
            "r_pages_per_s",
            "R: rendered pages/s (script-built page)",
            rendered.get("pages_per_s"),
            ">=",
            GOAL_R_PAGES_PER_S,
            missing=no_render,
        ),
        _goal(
            "r_browser_mb",
            "R: peak Chromium memory, RSS summed",
            rendered.get("browser_peak_rss_mb"),
            "<=",
            GOAL_R_BROWSER_MB,
            unit="MB",
            missing=no_render,
        ),
        _goal(
            "r_actions_ratio",
            "R: rendered pages/s with 3 actions (click, wait, full-page screenshot) ÷ without",
            rendered.get("actions_ratio"),
            ">=",
            GOAL_R_ACTIONS_RATIO,
            missing=no_render,
        ),
        _goal(
            "r_actions_browser_mb",
            "R: peak Chromium memory with full-page screenshots, RSS summed",
            rendered.get("actions_browser_peak_rss_mb"),
            "<=",
            GOAL_R_BROWSER_MB,
            unit="MB",
            missing=no_render,
        ),
        _goal(
            "m_plain_ratio",
            "M: plain pages/s beside model work (2 s answers) ÷ alone",
            modelled.get("plain_ratio"),
            ">=",
            GOAL_M_PLAIN_RATIO,
            missing=missing,
        ),
        _goal(
            "m_model_calls_at_once",
            "M: most model calls at once (the default cap: 8)",
            modelled.get("model_most_in_flight"),
            "<=",
            modelled.get("model_cap") or 8,
            missing=missing,
        ),
        _goal(
            "u_auto_vs_render",
            'U: 10% script-built pages, render "auto" pages/s ÷ render: true',
            (auto.get("auto_vs_render")),
            ">=",
            GOAL_U_VS_RENDER,
            missing=no_auto,
        ),
        _goal(
            "u_auto_rendered_share",
            'U: share of pages render "auto" rendered (10% are script-built)',
            (auto.get("auto") or {}).get("rendered_share"),
            "<=",
            0.1,
            missing=no_auto,
        ),
        _goal(
            "f_vs_native",
            "F: 5,000 URLs (markdown), /v2/batch/scrape pages/s ÷ /v1/jobs",
            (ours.get("F") or {}).get("ratio"),
            ">=",
            GOAL_F_RATIO,
            missing=missing,
        ),
        _goal(
            "k_check_vs_plain",
            "K: a check of 1,000 unchanged pages (304) pages/s ÷ a plain job of them",
            (ours.get("K") or {}).get("ratio"),
            ">=",
            K_GOAL_RATIO,
            missing=missing,
        ),
        _goal(
            "k_writes_per_page",
            "K: Firestore writes per unchanged page of a check",
            ((ours.get("K") or {}).get("check_firestore_per_page") or {}).get("writes"),
            "<=",
            K_GOAL_WRITES,
            missing=missing,
        ),
        _goal(
            "t_small_beside_large",
            "T: tenant Y's one-URL jobs beside tenant X's 5,000 URLs of one host, p95 ÷ alone",
            (ours.get("T") or {}).get("p95_ratio"),
            "<=",
            T_GOAL_RATIO,
            missing=missing,
        ),
        _goal(
            "d_plain_beside_documents",
            "D: plain pages/s beside a job of 200 PDFs of 10 pages ÷ alone (medians)",
            (ours.get("D") or {}).get("plain_ratio"),
            ">=",
            D_GOAL_RATIO,
            missing=missing,
        ),
        _goal(
            "d_book_cpu_s",
            "D: CPU seconds to read a 100-page text PDF into markdown",
            ((ours.get("D") or {}).get("book") or {}).get("cpu_s"),
            "<=",
            D_GOAL_BOOK_S,
            missing=missing,
        ),
        _goal(
            "o_word_f1",
            "O: word F1 of made scans (200 dpi, skewed, noisy) read by OCR",
            (ours.get("O") or {}).get("word_f1"),
            ">=",
            O_GOAL_F1,
            missing=missing,
        ),
        _goal(
            "o_cpu_s_per_page",
            "O: CPU seconds a scanned page at 200 dpi takes OCR",
            (ours.get("O") or {}).get("cpu_s_per_page"),
            "<=",
            O_GOAL_CPU_S,
            missing=missing,
        ),
        _goal(
            "o_plain_beside_scans",
            "O: plain pages/s beside a job of a 20-page scanned PDF ÷ alone (medians)",
            (ours.get("O") or {}).get("plain_ratio"),
            ">=",
            O_GOAL_RATIO,
            missing=missing,
        ),
        _goal(
            "p_through_a_proxy",
            "P: pages/s through a local tunnelling proxy ÷ direct (best runs; proxy CPU beside)",
            (ours.get("P") or {}).get("ratio"),
            ">=",
            P_GOAL_RATIO,
            missing=missing,
        ),
        _goal(
            "s_search_overhead",
            "S: a search scraping 5 results, seconds over its job's own time (median, labelled)",
            (ours.get("S") or {}).get("overhead_s_median"),
            "<=",
            S_GOAL_OVERHEAD_S,
            missing=missing,
        ),
    ]


def floor_ratios(
    bare: LoopFigures, celery: CeleryFigures | None, floor: dict[str, Any]
) -> dict[str, Any]:
    """A floor against the goals: its messages/s ÷ Celery's pages/s (and ÷ the bare loop's, for
    information), and the least worker CPU a page could cost (the bare loop's fetch + extract +
    the floor app's CPU per message) ÷ the bare loop's CPU per page."""
    bare_ms = bare.cpu_s_per_1000  # CPU-s per 1,000 pages = CPU-ms per page
    least_ms = bare_ms + floor["cpu_ms_per_message"]["app"]
    msgs_per_s = floor["msgs_per_s"] or 0.0
    throughput = msgs_per_s / celery.pages_per_s if celery and celery.pages_per_s else None
    cpu = least_ms / bare_ms if bare_ms else float("inf")
    return {
        "reference": bare.name,
        "throughput_reference": celery.name if celery else None,
        "throughput_ratio": round(throughput, 3) if throughput is not None else None,
        "throughput_goal_reachable": (
            throughput >= GOAL_THROUGHPUT_RATIO if throughput is not None else None
        ),
        "throughput_ratio_vs_bare": round(msgs_per_s / bare.pages_per_s, 3),
        "bare_cpu_ms_per_page": round(bare_ms, 3),
        "least_worker_cpu_ms_per_page": round(least_ms, 3),
        "cpu_ratio": round(cpu, 2),
        "cpu_goal_reachable": cpu <= GOAL_CPU_RATIO,
    }


def _fmt(value: Any, spec: str = ".1f") -> str:
    if value is None:
        return "-"
    if isinstance(value, float):
        return format(value, spec)
    return str(value)


def _ratio(value: float, reference: float) -> str:
    return f"{value / reference:.2f}x" if reference else "-"


def print_report(  # noqa: C901 (a printed report: one branch per optional section)
    loops: list[LoopFigures],
    celery: CeleryFigures | None,
    stack: dict[str, Any] | None,
    goal: dict[str, Any],
    floors: list[dict[str, Any]],
    cost: dict[str, Any] | None,
    instructions: dict[str, Any] | None = None,
) -> None:
    bare = loops[0]
    runs: list[LoopFigures | CeleryFigures] = [*loops, *([celery] if celery else [])]
    columns = [f.name for f in runs] + (["full stack"] if stack else [])
    columns += [f["name"] for f in floors]
    st: dict[str, Any] = stack or {}  # read only when there is a stack column
    stack_cpu = st.get("cpu_s_per_1000_pages") or {}

    def row(
        label: str,
        run_value: Callable[[Any], str],
        stack_value: Callable[[], str],
        floor_value: Callable[[dict[str, Any]], str],
    ) -> tuple[str, list[str]]:
        return (
            label,
            [run_value(f) for f in runs]
            + ([stack_value()] if stack else [])
            + [floor_value(f) for f in floors],
        )

    def per_page_ms(f: Any) -> str:
        if isinstance(f, LoopFigures):
            return f"{f.page_ms_p50:.1f} / {f.page_ms_p95:.1f}"
        return "-"

    def errors(f: Any) -> str:
        return f"{f.errors} / {f.mismatches}"

    def client_cpu(f: Any) -> str:
        if isinstance(f, CeleryFigures):
            return f"{f.per_1000(f.client_cpu_s):.2f}"
        return "-"

    celery_pps = celery.pages_per_s if celery else 0.0
    rows: list[tuple[str, list[str]]] = [
        row(
            "pages", lambda f: str(f.pages), lambda: str(st["pages"]), lambda f: str(f["messages"])
        ),
        row(
            "wall time, s",
            lambda f: _fmt(f.wall_s, ".2f"),
            lambda: _fmt(st["e2e_s"], ".2f"),
            lambda f: _fmt(f["span_s"], ".2f"),
        ),
        row(
            "pages/s",
            lambda f: _fmt(f.pages_per_s),
            lambda: _fmt(st["pages_per_s"]),
            lambda f: _fmt(f["msgs_per_s"]),
        ),
        row(
            "pages/s ÷ Celery",
            lambda f: _ratio(f.pages_per_s, celery_pps),
            lambda: _ratio(st["pages_per_s"], celery_pps),
            lambda f: _ratio(f["msgs_per_s"] or 0.0, celery_pps),
        ),
        row(
            "CPU-s / 1,000 pages *",
            lambda f: _fmt(f.cpu_s_per_1000, ".2f"),
            lambda: _fmt(stack_cpu["worker"], ".2f"),
            lambda f: _fmt(f["cpu_ms_per_message"]["app"], ".2f"),
        ),
        row(
            f"CPU ÷ {bare.name}",
            lambda f: _ratio(f.cpu_s_per_1000, bare.cpu_s_per_1000),
            lambda: _ratio(stack_cpu["worker"], bare.cpu_s_per_1000),
            lambda f: _ratio(f["cpu_ms_per_message"]["app"], bare.cpu_s_per_1000),
        ),
        row(
            "client CPU-s / 1,000 pages",
            client_cpu,
            lambda: _fmt(stack_cpu.get("bench_process"), ".2f"),
            lambda f: "-",
        ),
        row(
            "per page, ms p50 / p95 **",
            per_page_ms,
            lambda: (
                f"{st['fetch_elapsed_ms']['p50']:.1f} / {st['fetch_elapsed_ms']['p95']:.1f} (fetch)"
            ),
            lambda f: "-",
        ),
        row(
            "errors / wrong values",
            errors,
            lambda: f"{st['pages'] - st['succeeded']} / {st['mismatches']}",
            lambda f: f"{f['errors']} / -",
        ),
    ]
    width = max(len(r[0]) for r in rows) + 2
    # one width per column: the floors make the table wide
    cols = [max(12, len(c) + 2, *(len(r[1][i]) + 2 for r in rows)) for i, c in enumerate(columns)]
    print()
    print("".ljust(width) + "".join(c.rjust(w) for c, w in zip(columns, cols, strict=True)))
    for label, values in rows:
        print(label.ljust(width) + "".join(v.rjust(w) for v, w in zip(values, cols, strict=True)))
    print(
        "*  bare/worker-path: this process's CPU (site excluded); celery: the worker's process\n"
        "   tree + redis-server (the enqueueing client apart); full stack: the worker process;\n"
        "   floors: the floor app's process (no fetch, no extract), per message.\n"
        "** loops: fetch + extract per page; full stack: fetch only (results' elapsed_ms).\n"
        "errors / wrong values: loops over all measured passes; floors: failed Firestore work."
    )
    if celery:
        print_celery_details(celery)
    print_goals(goal)
    if stack:
        print_stack_details(stack)
    if instructions and "ratio" in instructions:
        print_instructions(instructions, bare.name)
    if cost:
        print_cost(cost)
    if floors:
        print_floor_details(floors)


def print_instructions(counts: dict[str, Any], bare_name: str) -> None:
    rows = [
        (f"{bare_name}, one pass", f"{counts['bare_per_page'] / 1e6:.2f} M per page"),
        (
            "stack worker, one process, one job",
            f"{counts['worker_per_page'] / 1e6:.2f} M per page "
            f"({counts['ratio']:.2f}x; ~50x slower under callgrind, it commits a running "
            "batch every 10 s, not every second: still more often per page than at full speed)",
        ),
    ]
    title = (
        f"Instructions per page (callgrind, user space; {counts['pages']} pages; "
        "the machine's load barely moves them: bare ±0.1%, worker ±4% across runs)"
    )
    _print_rows(title, rows)


def print_celery_details(celery: CeleryFigures) -> None:
    rows = [
        (
            "CPU-s / 1,000 pages",
            f"worker tree {celery.per_1000(celery.worker_cpu_s):.2f}, "
            f"redis-server {celery.per_1000(celery.redis_cpu_s):.2f}, "
            f"enqueueing client {celery.per_1000(celery.client_cpu_s):.2f}",
        ),
        ("enqueue N tasks", f"{celery.enqueue_s:.2f} s (median of {len(celery.runs_wall_s)})"),
        ("passes: wall, s", ", ".join(f"{w:.2f}" for w in celery.runs_wall_s)),
        (
            "RSS after the passes",
            f"worker tree {celery.worker_rss_mb:.0f} MB, redis {celery.redis_rss_mb:.0f} MB",
        ),
    ]
    _print_rows(f"Celery + Redis ({celery.notes[0]})", rows)


def print_goals(goal: dict[str, Any]) -> None:
    rows: list[tuple[str, str]] = []
    for item in goal["items"]:
        op = "≥" if item["op"] == ">=" else "≤"
        target = f"goal {op} {item['goal']}{item['unit'] and ' ' + item['unit']}"
        if item["stretch"] is not None:
            target += f" (stretch {item['stretch']})"
        if item["value"] is None:
            value, verdict = "n/a", f"n/a: {item['missing']}"
        else:
            unit = f" {item['unit']}" if item["unit"] else ""
            value = f"{item['value']:g}{unit}"
            verdict = "MET" if item["met"] else "NOT MET"
            if item["stretch_met"]:
                verdict += ", stretch met"
        rows.append((item["label"], f"{value:<10}{target:<32}{verdict}"))
    if goal["throughput_vs_bare"] is not None:
        rows.append(
            (
                f"(end-to-end pages/s ÷ {goal['cpu_reference']} pages/s)",
                f"{goal['throughput_vs_bare']:g}  for information",
            )
        )
    title = (
        f"Goals (throughput against {goal['throughput_reference'] or 'Celery + Redis'}, "
        f"CPU against {goal['cpu_reference']})"
    )
    _print_rows(title, rows)


def print_stack_details(stack: dict[str, Any]) -> None:
    lat = stack["latency_s"]
    big = stack["big_submission"]
    rows: list[tuple[str, str]] = [
        ("stack start-up", f"{stack['startup_s']:.1f} s"),
        (f"accept the {stack['pages']}-URL job (POST → 202)", f"{stack['accept_s']:.2f} s"),
        (
            f"accept a {big['urls']}-URL job (POST → 202)",
            f"{big['accept_s']:.2f} s (then cancelled: HTTP {big['cancel_http_status']})",
        ),
        (
            "submit → result latency",
            f"first {_fmt(lat['first'], '.2f')} s, p50 {lat['p50']:.2f} s, "
            f"p95 {lat['p95']:.2f} s, last {_fmt(lat['last'], '.2f')} s",
        ),
        (
            "slot time per task (2 x wall / N)",
            f"{stack['derived_slot_ms_per_task_at_2']:.1f} ms",
        ),
        (
            "worker peak RSS",
            f"{stack['worker_rss_peak_mb']:.1f} MB sampled every 0.2 s, "
            f"VmHWM {stack['worker_vm_hwm_mb']:.1f} MB",
        ),
        (
            "CPU-s / 1,000 pages",
            ", ".join(f"{k} {v:.2f}" for k, v in stack["cpu_s_per_1000_pages"].items()),
        ),
        (
            "worker CPU ÷ paired bare c=2 pass",
            ", ".join(f"{r:.2f}" for r in stack.get("passes_worker_cpu_vs_paired_bare", []))
            + " (each job against bare passes run just before and after the jobs; the goal"
            " takes the median)",
        ),
        (
            "cores busy during the job",
            f"{stack['cores_busy_ours']:.2f} by the processes above, "
            f"{stack['cores_busy_machine']:.2f} machine-wide (of {stack['cpus']})",
        ),
        (
            "site requests / new connections",
            f"{stack['site_requests']} / {stack['site_connections']}",
        ),
        ("retried tasks (attempts > 1)", str(stack["retried_tasks"])),
        ("counts", str(stack["counts"])),
    ]
    rows += firestore_ops_rows(stack.get("firestore_ops") or {})
    timings = stack.get("worker_log_timings") or {}
    for key, s in timings.items():
        rows.append(
            (f"worker log {key}", f"p50 {s['p50']:.1f}, p95 {s['p95']:.1f}, mean {s['mean']:.1f}")
        )
    if not timings:
        rows.append(("worker service time", "not in the worker's log; fetch-only elapsed_ms above"))
    _print_rows("Full stack details", rows)
    probe = stack.get("firestore_probe") or {}
    if "error" in probe:
        _print_rows("Firestore probe", [("failed", probe["error"])])
    elif probe:
        rows = [
            (
                f"{step[:-3]} (a batch of {probe['batch_size']})",
                f"p50 {probe[step]['p50']:.1f} ms, p95 {probe[step]['p95']:.1f} ms",
            )
            for step in ("claim_ms", "settle_ms")
            if step in probe
        ]
        rows.append(("tasks/s through claim + settle", f"{probe['tasks_per_s']:.0f}"))
        rows.append(("client CPU per task", f"{probe['client_cpu_ms_per_task']:.2f} ms"))
        rows.append(
            (
                "document reads / writes per task",
                f"{probe['reads_per_task']:.3f} / {probe['writes_per_task']:.3f}",
            )
        )
        title = f"Firestore probe (the worker's store calls, c={probe['concurrency']})"
        _print_rows(title, rows)


def firestore_ops_rows(ops: dict[str, Any]) -> list[tuple[str, str]]:
    def counted(part: dict[str, Any] | None) -> str:
        if not part:
            return "n/a (no firestore_* fields in its log)"
        fields = ", ".join(
            f"{k.removeprefix('firestore_')} {v}" for k, v in part.items() if k != "lines"
        )
        return f"{fields} ({part['lines']} lines)"

    per_page = ops.get("per_page") or {}
    return [
        ("Firestore ops, worker", counted(ops.get("worker"))),
        ("Firestore ops, dispatcher (submission)", counted(ops.get("dispatcher"))),
        (
            "Firestore ops per page",
            ", ".join(f"{op} {_fmt(per_page.get(op), '.3f')}" for op in ("reads", "writes"))
            + ("" if ops.get("complete") else "  (n/a unless both services log them)"),
        ),
        (
            "Pub/Sub messages handled",
            f"{ops.get('messages', 0)} ({ops.get('message_source', '-')} lines), "
            f"{_fmt(ops.get('pages_per_message'), '.2f')} pages per message",
        ),
    ]


def print_cost(cost: dict[str, Any]) -> None:
    rows: list[tuple[str, str]] = []
    for line in cost["lines"]:
        usd = "n/a" if line["usd"] is None else f"${line['usd']:,.2f}"
        missing = f"; left out: {', '.join(line['missing'])}" if line["missing"] else ""
        rows.append((line["item"], f"{usd:>9}   {line['basis']}{missing}"))
    rows.append(("total", f"${cost['total_usd']:,.2f}   {cost['total_is']}"))
    if cost["total_missing"]:
        rows.append(("  INCOMPLETE, left out", "; ".join(cost["total_missing"])))
    title = (
        "Estimated production cost per million pages, USD at list prices "
        f"(looked up {cost['prices_looked_up']}; sources and assumptions: bench/README.md)"
    )
    _print_rows(title, rows)


def print_floor_details(floors: list[dict[str, Any]]) -> None:
    reach = {True: "within reach", False: "OUT OF REACH", None: "n/a (no Celery run)"}
    bare = floors[0]["vs_bare"]
    rows: list[tuple[str, str]] = []
    for f in floors:
        vs = f["vs_bare"]
        cpu = f["cpu_ms_per_message"]
        rows += [
            (
                f"{f['name']}: msgs/s ÷ Celery pages/s",
                f"{_fmt(vs['throughput_ratio'], '.3f')}   goal ≥ {GOAL_THROUGHPUT_RATIO}   "
                f"{reach[vs['throughput_goal_reachable']]}   "
                f"(÷ bare: {vs['throughput_ratio_vs_bare']:.3f})",
            ),
            (
                "  (bare + app CPU/msg) ÷ bare CPU/page",
                f"{vs['cpu_ratio']:.2f}   goal ≤ {GOAL_CPU_RATIO}   "
                f"{reach[vs['cpu_goal_reachable']]}   "
                f"({vs['bare_cpu_ms_per_page']:.2f} + {cpu['app']:.2f} ms)",
            ),
            (
                "  emulators' CPU per message",
                f"Pub/Sub {cpu['pubsub_emulator']:.2f} ms "
                f"(+ {f['pubsub_publish_cpu_ms_per_message']:.2f} ms publish), "
                f"Firestore {cpu['firestore_emulator']:.2f} ms",
            ),
        ]
        if f["redeliveries"] or f["errors"]:
            rows.append(("  redeliveries / errors", f"{f['redeliveries']} / {f['errors']}"))
    title = (
        "Floors: what the emulators allow with the least possible worker "
        f"(reference: {bare['reference']}, {bare['bare_cpu_ms_per_page']:.2f} CPU-ms/page)"
    )
    _print_rows(title, rows)


def _print_rows(title: str, rows: list[tuple[str, str]]) -> None:
    width = max(len(label) for label, _ in rows) + 3
    print(f"\n{title}")
    for label, value in rows:
        print(f"  {label.ljust(width)}{value}")


def machine_info() -> dict[str, Any]:
    return {
        "cpus": os.cpu_count(),
        "loadavg": [round(x, 2) for x in os.getloadavg()],
        "python": platform.python_version(),
        "platform": platform.platform(),
    }


def git_revision() -> str | None:
    with contextlib.suppress(OSError, subprocess.SubprocessError):
        out = subprocess.run(
            ["git", "rev-parse", "--short", "HEAD"],
            capture_output=True,
            text=True,
            timeout=5,
            cwd=BENCH_DIR,
        )
        return out.stdout.strip() or None
    return None


def run(args: argparse.Namespace, cleanup: Cleanup, log_dir: Path) -> dict[str, Any]:
    paths = bench_paths(args.pages)
    warmup = bench_paths(WARMUP_PAGES, start=PRODUCTS - 2 * WARMUP_PAGES)
    stack_warmup = bench_paths(STACK_WARMUP_PAGES, start=PRODUCTS - 4 * STACK_WARMUP_PAGES)
    big = bench_paths(BIG_SUBMISSION, start=args.pages)
    truth = {p: expected(p) for p in [*paths, *warmup, *stack_warmup]}
    report: dict[str, Any] = {
        "started_at": datetime.now(UTC).isoformat(),
        "git_revision": git_revision(),
        "machine_before": machine_info(),
        "pages": args.pages,
        "category_page_every": CATEGORY_EVERY,
        "fields": FIELDS,
    }

    started = time.perf_counter()
    site, site_url = start_site(
        log_dir,
        prerender=args.pages + WARMUP_PAGES + C_PAGES + T_PAGES,
        extra_hosts=-(-args.pages // URLS_PER_HOST),
    )
    cleanup.add("catalog site", site.stop)
    report["site_startup_s"] = round(time.perf_counter() - started, 2)
    print(f"catalog site ready at {site_url} ({report['site_startup_s']:.1f} s)")

    loops = asyncio.run(run_baselines(site_url, paths, warmup, truth))
    for f in loops:
        print(f"{f.name:>16}: {f.pages_per_s:8.1f} pages/s, {f.cpu_s_per_1000:6.2f} CPU-s/1k")
    report["baselines"] = [f.as_dict() for f in loops]

    celery = run_celery_baseline(args, site_url, paths, warmup, truth, cleanup, log_dir, started)
    report["celery"] = celery.as_dict() if celery else None

    floors: list[dict[str, Any]] = []
    if not args.skip_floors:
        from bench.floors import run_floors  # imports the Google clients

        print("floor runs (emulators + the least possible worker)…")
        floors = run_floors(
            args.pages,
            log_dir / "floors",
            cleanup.add,
            timeout_s=max(30.0, args.timeout - (time.perf_counter() - started) - 60),
        )
        for floor in floors:
            floor["vs_bare"] = floor_ratios(loops[0], celery, floor)
    report["floors"] = floors

    stack: dict[str, Any] | None = None
    stacks: list[Stack] = []
    if not args.skip_stack:
        from bench.stack_run import restore_environ, run_stack  # imports the Google clients

        print("starting the stack (emulators, dispatcher, worker)…")
        saved_env = dict(os.environ)
        cleanup.add("environment", lambda: restore_environ(saved_env))

        def started_stack(started: Stack) -> None:
            stacks.append(started)
            cleanup.add("stack", started.stop)

        def measure(logs: Path, worker_env: dict[str, str] | None = None) -> dict[str, Any]:
            return run_stack(
                site_url,
                site.pid,
                paths,
                stack_warmup,
                big,
                truth,
                logs,
                job_timeout_s=max(30.0, args.timeout - (time.perf_counter() - started) - 90),
                on_started=started_stack,
                paired_bare=paired_bare_pass(site_url, paths, warmup, truth),
                worker_env=worker_env,
            )

        stack = measure(log_dir)
        report["stack"] = stack
        # printed now, not only in the report at the end: a run stopped later keeps it
        print(f"scrapejobs A: {stack['pages_per_s']} pages/s ({stack['pages']} pages, defaults)")
        for idle in stacks:
            idle.stop()
        # labelled, not the headline: pages extracted on the worker's event loop, as before
        # issue 37, without the per-page budget (what extracting in processes of their own costs)
        print("the stack again, extraction in process (labelled row)…")
        in_process = measure(log_dir / "in-process", {"SCRAPEJOBS_EXTRACTION_PROCESSES": "0"})
        report["stack_extraction_in_process"] = in_process
    for idle in stacks:  # stopped now: its processes' timers would slow the count
        idle.stop()
    instructions = (
        count_instructions(args, site_url, log_dir, cleanup) if stack is not None else None
    )
    report["instructions"] = instructions
    workloads = None
    if not args.skip_workloads:
        from bench.workloads import run_workloads

        print(
            "workloads B, C, L, R, U, M, F, T, K, D, O, P, S with default options (and Celery + "
            "Redis beside them)…"
        )
        workloads = run_workloads(
            site_url,
            args.pages,
            log_dir / "workloads",
            cleanup.add,
            rounds=1,
            celery=not args.skip_celery,
            only="BCRUMFTKDOPS",
        )
    report["workloads"] = workloads
    goal = goals(loops[0], celery, stack, instructions, workloads)
    report["goals"] = goal
    report["ratios"] = {item["key"]: item["value"] for item in goal["items"][:2]} | {
        "throughput_vs_bare": goal["throughput_vs_bare"]
    }
    cost = estimate(stack, report["celery"]) if stack else None
    report["cost_per_million_pages"] = cost
    report["machine_after"] = machine_info()
    print_report(loops, celery, stack, goal, floors, cost, instructions)
    print_isolation(stack, report.get("stack_extraction_in_process"), celery)
    return report


def print_isolation(
    stack: dict[str, Any] | None, in_process: dict[str, Any] | None, celery: CeleryFigures | None
) -> None:
    """A beside its labelled variant with pages extracted on the event loop."""
    if not stack or not in_process:
        return
    print("\nA, what extracting pages in processes of their own costs (one run):")
    for label, figures in (("default (processes)", stack), ("in process (labelled)", in_process)):
        vs_celery = (
            f", {figures['pages_per_s'] / celery.pages_per_s:.2f}x Celery + Redis" if celery else ""
        )
        print(
            f"  {label:<24}{figures['pages_per_s']:>8.1f} pages/s{vs_celery}, worker CPU "
            f"{figures['cpu_s_per_1000_pages']['worker']:.3f} s/1000 pages, "
            f"{figures.get('worker_cpu_vs_paired_bare', '?')}x the paired bare loop"
        )


def count_instructions(
    args: argparse.Namespace, site_url: str, log_dir: Path, cleanup: Cleanup
) -> dict[str, Any]:
    """Instructions per page of the bare c=2 loop and of the stack's worker, under callgrind;
    or why they were not counted."""
    if args.skip_instructions:
        return {"skipped": "--skip-instructions"}
    from bench import instruction_counts

    missing = instruction_counts.unavailable()
    if missing:
        print(f"note: instructions not counted: {missing}", file=sys.stderr)
        return {"skipped": missing}
    print("counting instructions per page under callgrind (bare loop, then a worker)…")
    try:
        counts = instruction_counts.count(
            site_url,
            instruction_counts.PAGES,
            log_dir / "instructions",
            lambda s: cleanup.add("instruction-count stack", s.stop),
        )
    except Exception as exc:  # the other figures stand; the goal row says why it is missing
        print(f"warning: instruction count failed: {exc}", file=sys.stderr)
        return {"skipped": f"failed: {type(exc).__name__}: {exc}"[:300]}
    return counts.as_dict()


def run_celery_baseline(
    args: argparse.Namespace,
    site_url: str,
    paths: list[str],
    warmup: list[str],
    truth: dict[str, dict[str, Any]],
    cleanup: Cleanup,
    log_dir: Path,
    started: float,
) -> CeleryFigures | None:
    """The Celery + Redis baseline, or None (skipped: asked to, or nothing to run it with)."""
    if args.skip_celery:
        return None
    why_not = unavailable()
    if why_not:
        print(f"note: Celery + Redis baseline skipped: {why_not}", file=sys.stderr)
        return None
    print("Celery + Redis baseline (redis-server + a prefork x2 worker)…")
    by_url = {site_url + p: value for p, value in truth.items()}
    left = args.timeout - (time.perf_counter() - started) - 60
    figures = run_celery(
        [site_url + p for p in paths],
        [site_url + p for p in warmup],
        by_url.__getitem__,
        log_dir / "celery",
        cleanup.add,
        timeout_s=max(30.0, min(CELERY_TIMEOUT_S, left)),
    )
    print(
        f"{figures.name:>16}: {figures.pages_per_s:8.1f} pages/s, "
        f"{figures.cpu_s_per_1000:6.2f} CPU-s/1k (worker + redis)"
    )
    return figures


def write_report(report: dict[str, Any], path: Path) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(report, indent=2, default=str) + "\n")
    print(f"\nfigures written to {path}")


def main(argv: list[str] | None = None) -> int:  # noqa: C901 (the run's steps, each optional)
    args = parse_args(argv)
    cleanup = Cleanup()
    log_dir = Path(tempfile.mkdtemp(prefix="scrapejobs-bench-"))
    keep_logs = args.keep_logs

    def on_alarm(signum: int, frame: FrameType | None) -> None:
        raise BenchTimeout(f"overall timeout of {args.timeout:.0f} s")

    def on_term(signum: int, frame: FrameType | None) -> None:
        raise Terminated()

    signal.signal(signal.SIGALRM, on_alarm)
    signal.signal(signal.SIGTERM, on_term)
    # Ctrl-C must stop the benchmark even when started in the background of a script (where
    # SIGINT is inherited as ignored).
    signal.signal(signal.SIGINT, signal.default_int_handler)
    signal.setitimer(signal.ITIMER_REAL, args.timeout)
    code = 0
    try:
        report = run(args, cleanup, log_dir)
        write_report(report, args.output)
        stack = report.get("stack") or {}
        wrong = sum(f["errors"] + f["mismatches"] for f in report["baselines"])
        if report.get("celery"):
            wrong += report["celery"]["errors"] + report["celery"]["mismatches"]
        if stack:
            wrong += stack["pages"] - stack["succeeded"] + stack["mismatches"]
        if wrong:
            print(f"error: {wrong} pages failed or extracted wrong values", file=sys.stderr)
            code, keep_logs = 1, True
    except BenchTimeout as exc:
        print(f"error: {exc}; stopping everything", file=sys.stderr)
        code, keep_logs = 3, True
    except (KeyboardInterrupt, Terminated):
        print("interrupted; stopping everything", file=sys.stderr)
        code = 130
    except Exception as exc:
        print(f"error: {type(exc).__name__}: {exc}", file=sys.stderr)
        for log in sorted(log_dir.rglob("*.log")):
            print(f"---- {log.relative_to(log_dir)}\n{log_tail(log, 15)}", file=sys.stderr)
        code, keep_logs = 1, True
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        previous = {s: signal.signal(s, signal.SIG_IGN) for s in (signal.SIGINT, signal.SIGTERM)}
        cleanup.run()
        stop_leftover_children()
        for signum, handler in previous.items():
            signal.signal(signum, handler)
        if keep_logs:
            print(f"logs kept in {log_dir}", file=sys.stderr)
        else:
            shutil.rmtree(log_dir, ignore_errors=True)
    return code


if __name__ == "__main__":
    sys.exit(main())
