"""Where a page's time goes on the full stack (issue 53): the A workload (one job of N catalog
pages of one host, default options) measured process by process, beside the bare c=2 loop
over the same pages, with each guard that can be switched off measured by its absence.

For each variant and round: a fresh stack, a warm-up job, one bare pass, the measured job.
Printed per page: CPU of each kind of process (the worker's processes, its extraction
processes, the Firestore and Pub/Sub emulators, the dispatcher, the site), the bare loop's CPU
paired with it, the batch phases from the worker's log (milliseconds a task spent waiting for
admission, fetching, being extracted, recorded), Firestore documents read and written.

    uv run python bench/where_time_goes.py --pages 5000 --rounds 2
    uv run python bench/where_time_goes.py --workload B   # 20 URLs a host (127.0.0.2, …)
    uv run python bench/where_time_goes.py --variants default --py-spy "$(which py-spy)" \\
        --spy-dir /tmp/spy          # GIL-holding stacks of every worker process (raw format)

Variants: ``default``; ``in-process`` (``SCRAPEJOBS_EXTRACTION_PROCESSES=0``: extraction on
the worker's event loop, without the CPU and memory budgets: what the extraction processes
cost); ``one-extraction-process`` (one per worker process instead of two). Everything binds
loopback and is stopped by pid when the script ends.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import httpx
import psutil

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from bench.bare_loop import bare_loop
from bench.catalog_site import PRODUCTS, bench_paths, expected
from bench.site_process import start_site
from bench.stack_run import (
    LOG_BATCH_MESSAGE,
    bench_config,
    firestore_ops,
    log_entries,
    submit,
    wait_completed,
)
from bench.workloads import URLS_PER_HOST, host_urls
from scrapejobs_devstack.stack import Stack

VARIANTS = {
    "default": {},
    "in-process": {"SCRAPEJOBS_EXTRACTION_PROCESSES": "0"},
    "one-extraction-process": {"SCRAPEJOBS_EXTRACTION_PROCESSES": "1"},
}
WARMUP_PAGES = 1000
PHASES = ("admit_ms", "fetch_ms", "extract_ms", "record_ms", "claim_ms", "release_ms")
RESULTS = Path(__file__).parent / "results" / "where_time_goes.json"


def _role(name: str, process: psutil.Process) -> str:
    """What a process of the stack is: the worker's own processes are told apart by how
    multiprocessing started them (uvicorn's workers are spawned; extraction processes come
    from the fork server)."""
    if name != "worker":
        return name
    command = " ".join(process.cmdline())
    if "forkserver" in command:
        return "worker: extraction processes"
    if "spawn_main" in command:
        return "worker: processes"
    return "worker: supervisor and helpers"


def cpu_by_role(roots: dict[str, int]) -> dict[str, float]:
    """CPU seconds used so far by every process under each root, summed by role; each
    process keyed by pid so that a process ended between two reads is not subtracted."""
    used: dict[str, float] = {}
    for name, pid in roots.items():
        try:
            root = psutil.Process(pid)
            processes = [root, *root.children(recursive=True)]
        except psutil.Error:
            continue
        for process in processes:
            try:
                times = process.cpu_times()
                key = f"{_role(name, process)}\0{process.pid}"
                used[key] = times.user + times.system
            except psutil.Error:
                continue
    return used


def memory_by_role(roots: dict[str, int]) -> dict[str, float]:
    """Proportional set size (MB) of the worker's processes by role, now: pages shared
    between processes (the fork server's modules in its children, the interpreter's) are
    divided among them, so the sum is what the worker costs the machine (RSS would count
    every shared page once per process)."""
    used: dict[str, float] = {}
    root = psutil.Process(roots["worker"])
    for process in [root, *root.children(recursive=True)]:
        try:
            pss = process.memory_full_info().pss
        except psutil.Error:
            continue
        role = _role("worker", process)
        used[role] = used.get(role, 0.0) + pss / 2**20
    return {role: round(mb, 1) for role, mb in sorted(used.items())}


def _per_role(before: dict[str, float], after: dict[str, float], pages: int) -> dict[str, float]:
    totals: dict[str, float] = {}
    for key, cpu in after.items():
        role = key.split("\0")[0]
        totals[role] = totals.get(role, 0.0) + cpu - before.get(key, 0.0)
    ranked = sorted(totals.items(), key=lambda item: -item[1])
    return {role: round(cpu * 1000 / pages, 3) for role, cpu in ranked}


def _phases(log: Path, job_id: str, pages: int) -> dict[str, float]:
    sums: dict[str, float] = dict.fromkeys(PHASES, 0.0)
    for entry in log_entries(log):
        if entry.get("message") == LOG_BATCH_MESSAGE and entry.get("job_id") == job_id:
            for phase in PHASES:
                sums[phase] += float(entry.get(phase) or 0)
    return {phase: round(sums[phase] / pages, 2) for phase in PHASES}


def _spy(binary: str, out_dir: Path, stack: Stack, tag: str) -> list[subprocess.Popen[bytes]]:
    assert stack.worker is not None
    spies = []
    for process in psutil.Process(stack.worker.pid).children(recursive=True):
        role = _role("worker", process).split(": ")[1].replace(" ", "-")
        target = out_dir / f"{tag}-{role}-{process.pid}.txt"
        command = [binary, "record", "-p", str(process.pid), "-r", "250", "-f", "raw", "--gil"]
        spies.append(
            subprocess.Popen(
                [*command, "-o", str(target), "--nonblocking"],
                stdout=subprocess.DEVNULL,
                stderr=subprocess.DEVNULL,
            )
        )
    time.sleep(1.5)  # attached before the job starts
    return spies


def one_round(
    variant: str, pages: int, site_url: str, site_pid: int, args: argparse.Namespace, tag: str
) -> dict[str, Any]:
    paths = bench_paths(pages)
    warmup = bench_paths(WARMUP_PAGES, start=PRODUCTS - 2 * WARMUP_PAGES)
    urls = (  # B: the same pages, 20 a host on 127.0.0.2, 127.0.0.3, …
        host_urls(int(site_url.rsplit(":", 1)[1]), paths, URLS_PER_HOST)
        if args.workload == "B"
        else [site_url + p for p in paths]
    )
    truth = {url: expected(p) for url, p in zip(urls, paths, strict=True)}
    truth |= {site_url + p: expected(p) for p in warmup}
    log_dir = Path(tempfile.mkdtemp(prefix=f"where-{variant}-"))
    stack = Stack(bench_config(log_dir, VARIANTS[variant]))
    spies: list[subprocess.Popen[bytes]] = []
    try:
        stack.start()
        assert stack.worker is not None and stack.dispatcher is not None
        assert stack.firestore is not None and stack.pubsub is not None
        roots = {
            "worker": stack.worker.pid,
            "firestore emulator": stack.firestore.process.pid,
            "pubsub emulator": stack.pubsub.process.pid,
            "dispatcher": stack.dispatcher.pid,
            "site": site_pid,
        }
        with httpx.Client(
            base_url=stack.config.dispatcher_url, timeout=300, trust_env=False
        ) as api:
            warm, _ = submit(api, [site_url + p for p in warmup])
            wait_completed(api, warm["id"], 180)
            bare = asyncio.run(bare_loop(urls, [], 2, truth.__getitem__, repeats=1))
            if args.py_spy:
                spies = _spy(args.py_spy, args.spy_dir, stack, tag)
            before = cpu_by_role(roots)
            started = time.perf_counter()
            job, _ = submit(api, urls)
            final = wait_completed(api, job["id"], 900)
            seconds = time.perf_counter() - started
            after = cpu_by_role(roots)
            memory = memory_by_role(roots)
        by_role = _per_role(before, after, pages)
        worker_ms = sum(ms for role, ms in by_role.items() if role.startswith("worker"))
        ops = firestore_ops(stack.worker.log_path, stack.dispatcher.log_path, job["id"], 0, pages)
        return {
            "variant": variant,
            "workload": args.workload,
            "pages": pages,
            "succeeded": final["counts"].get("succeeded"),
            "pages_per_s": round(pages / seconds, 1),
            "cpu_ms_per_page": by_role,
            "worker_cpu_ms_per_page": round(worker_ms, 3),
            "bare_cpu_ms_per_page": round(bare.cpu_s_per_1000, 3),
            "worker_vs_bare": round(worker_ms / bare.cpu_s_per_1000, 2),
            "all_processes_cpu_ms_per_page": round(sum(by_role.values()), 3),
            "task_phases_ms": _phases(stack.worker.log_path, job["id"], pages),
            "firestore_per_page": ops["per_page"],
            "worker_pss_mb": memory,
        }
    finally:
        for spy in spies:
            spy.send_signal(2)
        for spy in spies:
            try:
                spy.wait(30)
            except subprocess.TimeoutExpired:
                spy.kill()
        stack.stop()


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--pages", type=int, default=5000)
    parser.add_argument("--rounds", type=int, default=2)
    parser.add_argument("--workload", choices=("A", "B"), default="A")
    parser.add_argument("--variants", nargs="+", default=list(VARIANTS), choices=list(VARIANTS))
    parser.add_argument("--py-spy", help="path of py-spy: record the worker's processes")
    parser.add_argument("--spy-dir", type=Path, default=Path(tempfile.gettempdir()) / "spy")
    parser.add_argument("--output", type=Path, default=RESULTS)
    args = parser.parse_args(argv)
    # stopped (SIGTERM): the stack and the site are stopped by the ``finally`` blocks
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(143))
    if args.py_spy:
        args.spy_dir.mkdir(parents=True, exist_ok=True)
    site_log = Path(tempfile.mkdtemp(prefix="where-site-"))
    hosts = -(-args.pages // URLS_PER_HOST) if args.workload == "B" else 0
    site, site_url = start_site(
        site_log, prerender=args.pages + 2 * WARMUP_PAGES, extra_hosts=hosts
    )
    rounds: list[dict[str, Any]] = []
    try:
        for n in range(args.rounds):
            for variant in args.variants:  # alternated: the machine's drift hits both
                figures = one_round(variant, args.pages, site_url, site.pid, args, f"r{n}")
                rounds.append(figures)
                print(json.dumps(figures))
    finally:
        site.stop()
    args.output.parent.mkdir(parents=True, exist_ok=True)
    args.output.write_text(json.dumps(rounds, indent=1))
    print(f"figures: {args.output}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
