"""Workload shapes with DEFAULT job options, side by side with Celery + Redis (``make bench``
runs them after the headline run; ``python bench/workloads.py`` runs them alone).

* **A**: one job of N URLs of one host (the catalog), no options: the default per-host cap (8)
  shared by two worker processes.
* **B**: one job of N URLs spread over many hosts (20 URLs each, on 127.0.0.2, 127.0.0.3, …:
  one catalog process listening on every address, so each is a host of its own).

Every figure is pages/s over the whole job (submit → ``completed``), the best of ``--rounds``
rounds, with the Firestore documents written and read per page from the services' logs.
Celery + Redis (prefork x2, acks_late, prefetch 1) runs over the same URLs in the same script.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from bench.catalog_site import PRODUCTS, bench_paths, expected
from bench.site_process import start_site
from scrapejobs_devstack.processes import ManagedProcess

WORKER_PROCESSES = 2  # as Celery's prefork x2: one per core
URLS_PER_HOST = 20
WARMUP_PAGES = 1000


def host_urls(site_port: int, paths: list[str], per_host: int) -> list[str]:
    """``paths`` spread over hosts 127.0.0.2, 127.0.0.3, … (``per_host`` URLs each)."""
    urls = []
    for i, path in enumerate(paths):
        host = i // per_host
        urls.append(f"http://127.0.{(host + 2) // 256}.{(host + 2) % 256}:{site_port}{path}")
    return urls


def _truth(url: str) -> dict[str, Any]:
    return expected("/" + url.split("/", 3)[3])


def run_stack_workloads(
    workloads: dict[str, list[str]],
    warmup: list[str],
    log_dir: Path,
    register: Callable[[str, Callable[[], None]], None],
    rounds: int,
    timeout_s: float,
    worker_processes: int = WORKER_PROCESSES,
) -> dict[str, Any]:
    import httpx

    from bench.stack_run import bench_config, firestore_ops, submit_job, wait_completed
    from scrapejobs_devstack.stack import Stack

    config = bench_config(log_dir)
    config.worker_processes = worker_processes
    stack = Stack(config)
    register("stack", stack.stop)
    stack.start()
    assert stack.worker is not None and stack.dispatcher is not None
    figures: dict[str, Any] = {}
    with httpx.Client(base_url=config.dispatcher_url, timeout=300.0, trust_env=False) as api:
        warm, _ = submit_job(api, warmup, options={})
        wait_completed(api, warm["id"], timeout_s=180)
        for name, urls in workloads.items():
            best: dict[str, Any] | None = None
            for _ in range(rounds):
                since = time.time()
                started = time.perf_counter()
                job, _ = submit_job(api, urls, options={})
                done = wait_completed(api, job["id"], timeout_s=timeout_s)
                wall = time.perf_counter() - started
                ops = firestore_ops(
                    stack.worker.log_path, stack.dispatcher.log_path, job["id"], since, len(urls)
                )
                figure = {
                    "pages": len(urls),
                    "wall_s": round(wall, 3),
                    "pages_per_s": round(len(urls) / wall, 1),
                    "counts": done.get("counts"),
                    "firestore_per_page": ops["per_page"],
                }
                print(f"scrapejobs {name}: {figure}", flush=True)
                if best is None or figure["pages_per_s"] > best["pages_per_s"]:
                    best = figure
            figures[name] = best
    stack.stop()
    return figures


def run_celery_workloads(
    workloads: dict[str, list[str]],
    warmup: list[str],
    log_dir: Path,
    register: Callable[[str, Callable[[], None]], None],
    rounds: int,
    timeout_s: float,
) -> dict[str, Any]:
    from bench.celery_baseline import run_celery, unavailable

    if reason := unavailable():
        return {"skipped": reason}
    figures: dict[str, Any] = {}
    for name, urls in workloads.items():
        celery = run_celery(urls, warmup, _truth, log_dir, register, timeout_s, passes=rounds)
        best_wall = min(celery.runs_wall_s)
        figures[name] = {
            "pages": len(urls),
            "wall_s": best_wall,
            "pages_per_s": round(len(urls) / best_wall, 1),
            "errors": celery.errors,
            "mismatches": celery.mismatches,
        }
        print(f"celery {name}: {figures[name]}", flush=True)
    return figures


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--pages", type=int, default=5000)
    parser.add_argument("--rounds", type=int, default=2)
    parser.add_argument("--only", default="AB", help="workloads to run, e.g. A or AB")
    parser.add_argument("--skip-celery", action="store_true")
    parser.add_argument("--worker-processes", type=int, default=WORKER_PROCESSES)
    parser.add_argument("--output", type=Path, default=None)
    args = parser.parse_args(argv)
    stops: list[tuple[str, Callable[[], None]]] = []

    def register(name: str, stop: Callable[[], None]) -> None:
        stops.append((name, stop))

    log_dir = Path(tempfile.mkdtemp(prefix="scrapejobs-workloads-"))
    paths = bench_paths(args.pages)
    warm_paths = bench_paths(WARMUP_PAGES, start=PRODUCTS - 4 * WARMUP_PAGES)
    hosts = -(-args.pages // URLS_PER_HOST)
    try:
        site: ManagedProcess
        site, site_url = start_site(log_dir, prerender=args.pages, extra_hosts=hosts)
        register("site", site.stop)
        port = int(site_url.rsplit(":", 1)[1])
        workloads: dict[str, list[str]] = {}
        if "A" in args.only:
            workloads["A"] = [site_url + p for p in paths]
        if "B" in args.only:
            workloads["B"] = host_urls(port, paths, URLS_PER_HOST)
        warmup = [site_url + p for p in warm_paths]
        report: dict[str, Any] = {"pages": args.pages, "rounds": args.rounds}
        if not args.skip_celery:
            report["celery"] = run_celery_workloads(
                workloads, warmup[:40], log_dir, register, args.rounds, 600
            )
        report["scrapejobs"] = run_stack_workloads(
            workloads, warmup, log_dir, register, args.rounds, 600, args.worker_processes
        )
        print(json.dumps(report, indent=2))
        if args.output:
            args.output.write_text(json.dumps(report, indent=2))
    finally:
        for _, stop in reversed(stops):
            with contextlib.suppress(Exception):
                stop()
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
