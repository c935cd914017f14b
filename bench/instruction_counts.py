"""Instructions per page, counted by valgrind's callgrind: the bare c=2 loop and the full
stack's worker, over the same pages.

CPU seconds per page move with what else the machine is doing: on the bench's 2 cores, the
same worker code measured 1.5-1.7 CPU-ms per page in experiments with one stack and 2.1-2.7 in
one with a second, idle stack beside it, and the bare loop 0.96 to 1.70 from run to run. An
instruction count barely moves: over ten runs the bare loop's stayed within 0.2%, the worker's
within ±4% (its work depends a little on timing: how batches interleave, how often it commits
or waits for a slot). So the bench also states the CPU goal as instructions per page.

* **bare**: ``bench/bare_loop.py``'s loop at concurrency 2, run under callgrind in a process of
  its own, counting only its measured pass (not the interpreter's start-up, the client's
  creation or the warm-up pass).
* **worker**: the worker service of a stack of its own, one process under callgrind (both of
  the emulator's pushes go to it) with its extraction processes (``--trace-children=yes``:
  every process below it is counted too), counting from the measured job's submission to its
  completion: the push route, the batch, the fetches, extraction and its pipe, the store's
  commits, the gRPC client, idle ticks. A job under callgrind runs about 50 times slower, so
  work done once a second (a running batch's commit: results, lease, cancel check) would
  happen about 50 times more often per page than at full speed. The counted worker commits a
  running batch every 10 s instead of every second (``WORKER_ENV``); the count still errs
  high.

Callgrind counts user-space instructions only; the kernel's share of system calls is in
neither count. Run as a script, this module is the bare loop's process.
"""

from __future__ import annotations

import asyncio
import dataclasses
import json
import os
import shutil
import subprocess
import sys
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

import httpx
import psutil

if TYPE_CHECKING:
    from scrapejobs_devstack.stack import Stack

CALLGRIND = ("valgrind", "--tool=callgrind", "--instr-atstart=no")
PAGES = 300  # per count: ~50 pages/s under callgrind
WORKER_WARMUP_PAGES = 200  # a job run uninstrumented first: imports, pools, warm host slots
READY_S = 300.0  # the worker's start-up under valgrind takes ~20 s
# full-speed behaviour at callgrind's speed: a 100-page batch takes ~0.3 s at full speed (it
# commits once, at its end) and ~15 s under callgrind
WORKER_ENV = {"SCRAPEJOBS_BATCH_FLUSH_INTERVAL_S": "10"}


@dataclass(frozen=True, slots=True)
class InstructionCounts:
    pages: int
    bare_per_page: float
    worker_per_page: float

    @property
    def ratio(self) -> float:
        return self.worker_per_page / self.bare_per_page

    def as_dict(self) -> dict[str, Any]:
        return dataclasses.asdict(self) | {"ratio": round(self.ratio, 3)}


def unavailable() -> str | None:
    """Why instructions cannot be counted here, or None."""
    missing = [tool for tool in ("valgrind", "callgrind_control") if shutil.which(tool) is None]
    if missing:
        return f"{', '.join(missing)} not found (Debian package: valgrind)"
    return None


def callgrind_control(pid: int, *args: str) -> None:
    subprocess.run(["callgrind_control", *args, str(pid)], check=True, capture_output=True)


def counting(pid: int) -> Callable[[bool], None]:
    """Turns callgrind's counting on and off in process ``pid``; off also writes the counts."""

    def switch(on: bool) -> None:
        callgrind_control(pid, "--instr=on" if on else "--instr=off")
        if not on:
            callgrind_control(pid, "--dump")

    return switch


def counting_tree(pid: int, counted: list[int]) -> Callable[[bool], None]:
    """``counting`` for process ``pid`` and every process below it (the worker's extraction
    processes, run under callgrind too with ``--trace-children=yes``); the pids switched on are
    added to ``counted``."""

    def switch(on: bool) -> None:
        pids = [pid, *(child.pid for child in psutil.Process(pid).children(recursive=True))]
        if on:
            counted.extend(pids)
        for each in pids if on else counted:
            counting(each)(on)

    return switch


def dumped_total(out_dir: Path, pid: int) -> int:
    """The instructions of the counts ``pid`` dumped on request (``<out>.<pid>.<n>`` files)."""
    total = 0
    dumps = sorted(out_dir.glob(f"callgrind.{pid}.*"))
    if not dumps:
        raise RuntimeError(f"no callgrind dump of pid {pid} in {out_dir}")
    for dump in dumps:
        for line in dump.read_text(errors="replace").splitlines():
            if line.startswith("totals:"):
                total += int(line.split()[1])
    return total


def count_bare(site_url: str, pages: int, out_dir: Path) -> float:
    """The bare c=2 loop's instructions per page, in a process of its own under callgrind."""
    out_dir.mkdir(parents=True, exist_ok=True)
    argv = [
        *CALLGRIND,
        f"--callgrind-out-file={out_dir}/callgrind.%p",
        sys.executable,
        str(Path(__file__).resolve()),
        site_url,
        str(pages),
    ]
    done = subprocess.run(argv, capture_output=True, text=True, timeout=600)
    if done.returncode != 0:
        raise RuntimeError(f"bare loop under callgrind failed: {done.stderr[-2000:]}")
    report = json.loads(done.stdout.strip().splitlines()[-1])
    if report["errors"] or report["mismatches"]:
        raise RuntimeError(f"bare loop under callgrind: {report}")
    return dumped_total(out_dir, report["pid"]) / pages


def count_worker(
    site_url: str, pages: int, log_dir: Path, on_started: Callable[[Stack], None]
) -> float:
    """The stack worker's instructions per page: a stack of its own whose one worker process
    and its extraction processes run under callgrind, counting over one job of ``pages`` URLs
    after a warm-up job (the extraction processes' instructions included)."""
    from bench.catalog_site import PRODUCTS, bench_paths
    from bench.stack_run import bench_config, submit, wait_completed
    from scrapejobs_devstack.stack import Stack

    out_dir = log_dir / "callgrind-worker"
    out_dir.mkdir(parents=True, exist_ok=True)
    config = dataclasses.replace(
        bench_config(log_dir / "instructions-stack"),
        worker_processes=1,
        worker_env=WORKER_ENV,
        worker_wrapper=(
            *CALLGRIND,
            "--trace-children=yes",
            f"--callgrind-out-file={out_dir}/callgrind.%p",
        ),
        worker_ready_s=READY_S,
    )
    stack = Stack(config)
    on_started(stack)  # the caller's cleanup stops it too, on errors and signals
    try:
        stack.start()
        assert stack.worker is not None
        pid = stack.worker.pid  # valgrind runs the program in its own process
        counted: list[int] = []
        switch = counting_tree(pid, counted)
        warm = [site_url + p for p in bench_paths(WORKER_WARMUP_PAGES, start=PRODUCTS - 6000)]
        urls = [site_url + p for p in bench_paths(pages)]
        with httpx.Client(base_url=config.dispatcher_url, timeout=300.0, trust_env=False) as api:
            job, _ = submit(api, warm)
            wait_completed(api, job["id"], timeout_s=READY_S)
            switch(True)
            job, _ = submit(api, urls)
            final = wait_completed(api, job["id"], timeout_s=READY_S)
            switch(False)
    finally:
        stack.stop()
    if final["counts"].get("succeeded") != pages:
        raise RuntimeError(f"instruction-count job: {final['counts']}")
    return sum(dumped_total(out_dir, each) for each in counted) / pages


def count(
    site_url: str, pages: int, log_dir: Path, on_started: Callable[[Stack], None]
) -> InstructionCounts:
    bare = count_bare(site_url, pages, log_dir / "callgrind-bare")
    worker = count_worker(site_url, pages, log_dir, on_started)
    return InstructionCounts(pages, round(bare), round(worker))


def _bare_process(site_url: str, pages: int) -> None:
    """The bare loop's process (run under callgrind): a warm-up pass uninstrumented, then one
    measured pass counted; prints its pid and error counts as JSON."""
    from bench.bare_loop import WARMUP_PAGES, bare_loop
    from bench.catalog_site import PRODUCTS, bench_paths, expected

    paths = bench_paths(pages)
    warmup = bench_paths(WARMUP_PAGES, start=PRODUCTS - 2 * WARMUP_PAGES)  # as the bench's
    truth = {site_url + p: expected(p) for p in [*paths, *warmup]}
    started = time.perf_counter()
    figures = asyncio.run(
        bare_loop(
            [site_url + p for p in paths],
            [site_url + p for p in warmup],
            2,
            truth.__getitem__,
            repeats=1,
            measuring=counting(os.getpid()),
        )
    )
    report = {
        "pid": os.getpid(),
        "errors": figures.errors,
        "mismatches": figures.mismatches,
        "wall_s": round(time.perf_counter() - started, 1),
    }
    print(json.dumps(report))


if __name__ == "__main__":
    sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
    _bare_process(sys.argv[1], int(sys.argv[2]))
