"""Workload shapes with DEFAULT job options, side by side with Celery + Redis (``make bench``
runs them after the headline run; ``python bench/workloads.py`` runs them alone).

* **A**: one job of N URLs of one host (the catalog), no options: the default per-host cap (8)
  shared by two worker processes.
* **B**: one job of N URLs spread over many hosts (20 URLs each, on 127.0.0.2, 127.0.0.3, …:
  one catalog process listening on every address, so each is a host of its own).
* **C**: 1,000 one-URL jobs from 16 client threads, each submitting a job and polling it (every
  50 ms) until it ends before the next, as the seeds' examples use a queue; jobs/s. Celery: 16
  threads each sending one task and waiting for its result. C is measured after an unmeasured
  warm-up of ``C_WARMUP_JOBS`` such jobs (the warm-up pages'), reported beside it: a freshly
  started Firestore emulator is a JVM still compiling its hot paths (a document read cost it
  2.6 ms of CPU in its first thousand reads, 0.6 ms after four thousand), which Firestore
  itself never is; Celery's Redis has no such phase.
* **R**: rendered pages: one job of ``R_PAGES`` script-built pages (``/scripted/N``) with
  ``options.render: true``, in the renderer (one process, Debian's Chromium): pages/s, the peak
  memory of all its Chromium processes (RSS summed, and PSS: shared pages counted once), and
  wrong values; then the plain throughput of ``R_PLAIN_PAGES`` catalog pages (of another host,
  ``R_PLAIN_HOST``: per-host politeness is not what is measured) alone and again while a second
  render job runs beside it.
* **M**: model work beside plain work: a job of ``M_AI_PAGES`` catalog pages whose pipeline
  holds an ``ai`` stage, answered by a loopback model server (scrapejobs_devstack.model_server)
  that takes ``M_MODEL_DELAY_S`` per answer, with every setting at its default (at most 8
  model calls at once); while it runs, the plain throughput of ``M_PLAIN_PAGES`` catalog pages
  of another host, from when every page of the ai job is fetched and handed on, against the
  same figure with no model work running (best of three each, after one unmeasured run), and
  the most calls the model server ever held at once against the cap.
* **U**: ``options.render: "auto"`` on a site of 90% plain pages and 10% script-built ones
  (``U_PAGES`` URLs: every tenth ``/scripted/N``), the same URLs three times: plain (no
  render option: the script-built pages end ``empty_content``), ``"auto"`` and
  ``render: true``; pages/s, the share rendered and the share extracted right, and the ratios
  of auto against the two.
* **F**: the Firecrawl-compatible API: the same ``F_PAGES`` catalog URLs with the markdown format
  through ``POST /v2/batch/scrape`` (polled as Firecrawl's SDK polls ``GET
  /v2/batch/scrape/{id}``, which returns Documents page by page) and through ``POST /v1/jobs``
  (polled on ``GET /v1/jobs/{id}``), alternately, best of ``--rounds`` each, both polled every
  ``F_POLL_S``: pages/s from submission to the job's ``finished_at``, and the ratio.
* **O**: scans read by OCR: ``bench/ocr_workload.py`` (word F1 and CPU a page of made scans;
  a plain job's pages/s beside a 20-page scanned PDF).
* **D**: documents beside web pages: ``bench/document_workload.py`` (200 PDFs of 10 pages
  beside a plain job of another host; a 100-page PDF's CPU).
* **L**: one one-URL job at a time, submit → completed (polled every 5 ms): p50 and p95 over
  ``L_JOBS`` jobs, beside the Pub/Sub emulator's own publish → push floor (a message published
  to a push subscription whose endpoint is a bare HTTP server in this process).

Every figure is pages/s over the whole job (submit → ``completed``), the best of ``--rounds``
rounds, with the Firestore documents written and read per page from the services' logs; each
workload after A and B, and each measured run of F and K, begins with none of the earlier
runs' results (bench/fresh_results.py: the emulator reads all of them for a query of one
job's).
Celery + Redis (prefork x2, acks_late, prefetch 1) runs over the same URLs in the same script.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import signal
import sys
import tempfile
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from bench.bare_loop import latency_summary
from bench.catalog_site import PRODUCTS, bench_paths, expected
from bench.fresh_results import forget_results
from bench.monitor_workload import K_PAGES
from bench.site_process import start_site
from scrapejobs_devstack.model_server import Answer, ModelServer
from scrapejobs_devstack.processes import ManagedProcess

WORKER_PROCESSES = 2  # as Celery's prefork x2: one per core
URLS_PER_HOST = 20
WARMUP_PAGES = 1000
C_JOBS = 1000
C_WARMUP_JOBS = 1000  # unmeasured one-URL jobs before C (the emulators' JIT warms up)
C_CLIENTS = 16
C_POLL_S = 0.05
L_JOBS = 50
L_POLL_S = 0.005
FLOOR_MESSAGES = 50
C_PAGES = C_JOBS + L_JOBS  # the one-URL jobs' pages: catalog products from N on
R_PAGES = 100
R_PLAIN_PAGES = 1000
R_PLAIN_HOST = "127.0.0.2"  # the plain pages' host: not the render job's (its slots are its own)
R_GOAL_PAGES_PER_S = 8.0
R_GOAL_BROWSER_BYTES = 1.5e9
U_PAGES = 300
U_SCRIPTED_EVERY = 10  # one page in ten is built by a script
F_PAGES = 5000
F_POLL_S = 1.0
F_ROUNDS = 3  # runs of each kind at least: runs differ by up to a third on this machine
M_AI_PAGES = 160  # 40 s of model work at the default cap of 8 calls of 2 s
M_PLAIN_PAGES = 2000
M_MODEL_DELAY_S = 2.0
M_PLAIN_HOST = "127.0.0.3"
M_SCHEMA = {
    "type": "object",
    "properties": {"summary": {"type": "string"}},
    "required": ["summary"],
}


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
    one_url: list[str] | None = None,
    render: tuple[str, list[str]] | None = None,
    model: tuple[ModelServer, list[str], list[str]] | None = None,
    firecrawl: list[str] | None = None,
    auto_render: tuple[str, int] | None = None,
    later: list[LaterWorkload] | None = None,
) -> dict[str, Any]:
    """Workloads A and B (best of ``rounds``), then, given ``one_url`` URLs, the push floor,
    C and L, then, given ``render`` (the catalog's URL and the plain pages run beside a render
    job), R, then, given ``auto_render`` (the catalog's URL and the first product), U, then,
    given ``model`` (the model server, the ai job's pages, the plain pages run
    beside it), M, then, given ``firecrawl`` URLs, F, then each of ``later`` (T, K, D: each
    a workload of its own module, run on the started stack); on one stack with default job
    options (the model's provider configured only for M)."""
    import httpx

    from bench.stack_run import bench_config, submit_job, wait_completed
    from scrapejobs_devstack.stack import Stack

    config = bench_config(log_dir)
    config.worker_processes = worker_processes
    if model is not None:
        ai = {
            "SCRAPEJOBS_AI_PROVIDER": "openai",
            "SCRAPEJOBS_AI_BASE_URL": f"{model[0].url}/v1",
            "SCRAPEJOBS_AI_MODEL": "bench-model",
        }
        config.dispatcher_env |= ai
        config.worker_env |= ai
    stack = Stack(config)
    register("stack", stack.stop)
    stack.start()
    assert stack.worker is not None and stack.dispatcher is not None
    figures: dict[str, Any] = {}

    def forget_earlier() -> None:  # the next run starts with no results of the runs before it
        assert stack.firestore is not None
        forgotten = forget_results(stack.firestore.host, config.project_id)
        print(f"results of the runs before deleted: {forgotten}", flush=True)

    with httpx.Client(base_url=config.dispatcher_url, timeout=300.0, trust_env=False) as api:
        warm, _ = submit_job(api, warmup, options={})
        wait_completed(api, warm["id"], timeout_s=180)
        figures |= best_job_runs(api, stack, workloads, rounds, timeout_s)
        if one_url:
            forget_earlier()
            figures |= one_url_figures(stack, one_url, warmup[:C_WARMUP_JOBS])
        if render is not None or auto_render is not None:
            forget_earlier()
            figures |= browser_workloads(api, stack, render, auto_render, timeout_s)
        if model is not None:
            forget_earlier()
            figures["M"] = run_model_workload(api, *model, timeout_s)
        if firecrawl is not None:
            figures["F"] = run_firecrawl_workload(api, firecrawl, rounds, timeout_s, forget_earlier)
        ran = LaterRun(api, stack, log_dir, register, rounds, timeout_s, forget_earlier)
        for workload in later or []:
            forget_earlier()
            figures[workload.name] = workload.run(ran)
    stack.stop()
    return figures


def best_job_runs(
    api: Any, stack: Any, workloads: dict[str, list[str]], rounds: int, timeout_s: float
) -> dict[str, Any]:
    """A and B: each a job of its URLs, the best of ``rounds`` runs."""
    from bench.stack_run import firestore_ops, submit_job, wait_completed

    figures: dict[str, Any] = {}
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
    return figures


def one_url_figures(stack: Any, one_url: list[str], warmup: list[str]) -> dict[str, Any]:
    """The push floor, then C and L (``warmup``: the unmeasured one-URL jobs' URLs)."""
    config = stack.config
    assert stack.pubsub is not None and stack.firestore is not None
    figures: dict[str, Any] = {
        "push_floor": push_floor(stack.pubsub.host, config.project_id, FLOOR_MESSAGES)
    }
    print(f"push floor: {figures['push_floor']}", flush=True)
    logs = (stack.worker.log_path, stack.dispatcher.log_path)
    pids = {
        "dispatcher": stack.dispatcher.pid,
        "worker": stack.worker.pid,
        "firestore": stack.firestore.process.pid,
        "pubsub": stack.pubsub.process.pid,
    }
    figures |= run_one_url_workloads(config.dispatcher_url, one_url, logs, pids, warmup)
    # The most a closed loop of C_CLIENTS can reach here: each job waits at least the
    # emulator's publish -> push floor and, on average, half a poll interval.
    floor_s = figures["push_floor"]["p50_ms"] / 1000
    figures["C"]["closed_loop_ceiling_jobs_per_s"] = round(C_CLIENTS / (floor_s + C_POLL_S / 2), 1)
    print(f"scrapejobs C: {figures['C']}\nscrapejobs L: {figures['L']}", flush=True)
    return figures


def one_url_jobs(
    api_url: str, urls: list[str], clients: int, poll_s: float, timeout_s: float
) -> list[float]:
    """Each of ``clients`` threads submits a one-URL job, polls it until it ends, then takes
    the next URL. Returns each job's submit → ended seconds; raises if a job did not succeed."""
    import concurrent.futures

    import httpx

    from bench.stack_run import one_url_job

    pending = list(reversed(urls))
    lock = threading.Lock()
    took: list[float] = []

    def client() -> None:
        with httpx.Client(base_url=api_url, timeout=30, trust_env=False) as api:
            while True:
                with lock:
                    if not pending:
                        return
                    url = pending.pop()
                seconds = one_url_job(api, url, poll_s, timeout_s)
                with lock:
                    took.append(seconds)

    with concurrent.futures.ThreadPoolExecutor(clients) as pool:
        for future in [pool.submit(client) for _ in range(clients)]:
            future.result()
    return took


def run_one_url_workloads(
    api_url: str,
    urls: list[str],
    log_paths: tuple[Path, Path],
    pids: dict[str, int] | None = None,
    warm: list[str] | None = None,
) -> dict[str, Any]:
    """C (``C_JOBS`` jobs, ``C_CLIENTS`` threads) and L (``L_JOBS`` jobs one at a time), with
    the Firestore documents the services read and wrote per one-URL job during C and, given
    ``pids`` (a name per process), the CPU each process tree spent per job during C. Given
    ``warm`` URLs, C's loop runs over them first, unmeasured (its rate reported apart)."""
    from bench.stack_run import (
        LOG_BATCH_MESSAGE,
        LOG_COALESCED_MESSAGE,
        LOG_SUBMIT_MESSAGE,
        LOG_SWEPT_MESSAGE,
        count_ops,
        log_entries,
        log_time,
        tree_cpu_s,
    )

    pids = pids or {}
    warm_up: dict[str, Any] = {}
    if warm:
        started = time.perf_counter()
        one_url_jobs(api_url, warm, C_CLIENTS, C_POLL_S, 120)
        rate = round(len(warm) / (time.perf_counter() - started), 1)
        warm_up = {"warm_up": {"jobs": len(warm), "jobs_per_s": rate, "measured": False}}
    since = time.time()
    cpu_before = {name: tree_cpu_s(pid) for name, pid in pids.items()}
    started = time.perf_counter()
    took = one_url_jobs(api_url, urls[:C_JOBS], C_CLIENTS, C_POLL_S, 120)
    wall = time.perf_counter() - started
    cpu_ms = {
        name: round((tree_cpu_s(pid) - cpu_before[name]) * 1000 / len(took), 2)
        for name, pid in pids.items()
    }
    counted = (LOG_BATCH_MESSAGE, LOG_SUBMIT_MESSAGE, LOG_COALESCED_MESSAGE, LOG_SWEPT_MESSAGE)
    during_c = [  # worker batches and upkeep, dispatcher submissions and coalesced commits
        entry
        for path in log_paths
        for entry in log_entries(path)
        if entry.get("message") in counted and "time" in entry and log_time(entry["time"]) >= since
    ]
    totals = count_ops(during_c) or {}
    ops = {op: totals.get(f"firestore_{op}", 0) for op in ("reads", "writes")}
    latencies = one_url_jobs(api_url, urls[C_JOBS : C_JOBS + L_JOBS], 1, L_POLL_S, 60)
    return {
        "C": {
            "jobs": len(took),
            "clients": C_CLIENTS,
            "wall_s": round(wall, 3),
            "jobs_per_s": round(len(took) / wall, 1),
            "firestore_per_job": {k: round(v / len(took), 3) for k, v in ops.items()},
            "cpu_ms_per_job": cpu_ms | {"total": round(sum(cpu_ms.values()), 2)},
            "note": "firestore_per_job: the services' own operations (status polls not counted)",
            **warm_up,
        },
        "L": latency_summary(latencies),
    }


def push_floor(pubsub_host: str, project_id: str, messages: int) -> dict[str, Any]:
    """The Pub/Sub emulator's publish → push latency: one message at a time to a push
    subscription whose endpoint is a bare HTTP server in this process (it answers 204)."""
    from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

    from bench.floors import pubsub_clients
    from scrapejobs_devstack.processes import free_port

    arrived = threading.Event()

    class Handler(BaseHTTPRequestHandler):
        def do_POST(self) -> None:
            self.rfile.read(int(self.headers.get("content-length") or 0))
            self.send_response(204)
            self.end_headers()
            arrived.set()

        def log_message(self, format: str, *args: object) -> None:
            pass

    port = free_port()
    server = ThreadingHTTPServer(("127.0.0.1", port), Handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    took: list[float] = []
    try:
        with pubsub_clients(pubsub_host) as (publisher, subscriber):
            topic = publisher.topic_path(project_id, "push-floor")
            subscription = subscriber.subscription_path(project_id, "push-floor")
            publisher.create_topic(name=topic)
            subscriber.create_subscription(
                name=subscription,
                topic=topic,
                push_config={"push_endpoint": f"http://127.0.0.1:{port}/push"},
                ack_deadline_seconds=10,
            )
            for n in range(messages + 5):  # 5 warm-up messages
                arrived.clear()
                started = time.perf_counter()
                publisher.publish(topic, b"{}").result()
                if not arrived.wait(30):
                    raise TimeoutError("the emulator pushed nothing within 30 s")
                if n >= 5:
                    took.append(time.perf_counter() - started)
            subscriber.delete_subscription(subscription=subscription)
    finally:
        server.shutdown()
        server.server_close()
    return latency_summary(took)


def run_celery_workloads(
    workloads: dict[str, list[str]],
    warmup: list[str],
    log_dir: Path,
    register: Callable[[str, Callable[[], None]], None],
    rounds: int,
    timeout_s: float,
    one_url: list[str] | None = None,
) -> dict[str, Any]:
    from bench.celery_baseline import run_celery, run_celery_one_at_a_time, unavailable

    if reason := unavailable():
        return {"skipped": reason}
    figures: dict[str, Any] = {}
    if one_url:
        figures["C"] = run_celery_one_at_a_time(
            one_url[:C_JOBS], warmup, log_dir, register, timeout_s, C_CLIENTS
        )
        print(f"celery C: {figures['C']}", flush=True)
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


class BrowserMemory:
    """The peak memory of every Chromium process under ``pid`` (the renderer), sampled every
    0.2 s from a thread: RSS summed (shared pages counted in each process) and PSS summed
    (shared pages split between the processes sharing them)."""

    def __init__(self, pid: int) -> None:
        self._pid = pid
        self.peak_rss = 0
        self.peak_pss = 0
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._sample, daemon=True)

    def __enter__(self) -> BrowserMemory:
        self._thread.start()
        return self

    def __exit__(self, *_: object) -> None:
        self._stop.set()
        self._thread.join()

    def _sample(self) -> None:
        import psutil

        while not self._stop.wait(0.2):
            rss = pss = 0
            with contextlib.suppress(psutil.Error):
                for child in psutil.Process(self._pid).children(recursive=True):
                    with contextlib.suppress(psutil.Error):
                        if "chrom" in child.name():
                            memory = child.memory_full_info()
                            rss += memory.rss
                            pss += getattr(memory, "pss", memory.rss)
            self.peak_rss = max(self.peak_rss, rss)
            self.peak_pss = max(self.peak_pss, pss)


def run_render_workload(
    api: Any, renderer_pid: int, site_url: str, plain_urls: list[str], timeout_s: float
) -> dict[str, Any]:
    """R: a render job alone (pages/s, browser memory, wrong values), then plain pages alone
    and beside a second render job."""
    from bench.stack_run import all_results, submit_job, wait_completed

    def render_urls(start: int) -> list[str]:
        return [f"{site_url}/scripted/{n}" for n in range(start, start + R_PAGES)]

    def timed(urls: list[str], options: dict[str, Any]) -> tuple[dict[str, Any], float]:
        started = time.perf_counter()
        job, _ = submit_job(api, urls, options=options)
        wait_completed(api, job["id"], timeout_s=timeout_s)
        return job, time.perf_counter() - started

    render = {"render": True}
    with BrowserMemory(renderer_pid) as memory:
        job, wall = timed(render_urls(0), render)
    results = all_results(api, job["id"])
    wrong = [
        r["url"]
        for r in results
        if r["status"] != "succeeded" or r["data"] != expected("/" + r["url"].split("/", 3)[3])
    ]
    figures: dict[str, Any] = {
        "pages": R_PAGES,
        "wall_s": round(wall, 2),
        "pages_per_s": round(R_PAGES / wall, 1),
        "wrong": len(wrong),
        "wrong_examples": wrong[:3],
        "browser_peak_rss_mb": round(memory.peak_rss / 1e6),
        "browser_peak_pss_mb": round(memory.peak_pss / 1e6),
        "rendered_ms_p50": _median([r["rendered_ms"] for r in results if r.get("rendered_ms")]),
    }
    figures |= _with_actions(api, timed, render_urls(2 * R_PAGES), wall, renderer_pid)
    _, alone = timed(plain_urls, {})
    beside: dict[str, float] = {}

    def render_beside() -> None:
        beside["render_wall_s"] = timed(render_urls(R_PAGES), render)[1]

    thread = threading.Thread(target=render_beside)
    thread.start()
    time.sleep(1.0)  # the render job under way
    _, with_render = timed(plain_urls, {})
    thread.join()
    figures["plain_pages_per_s_alone"] = round(len(plain_urls) / alone, 1)
    figures["plain_pages_per_s_beside_render"] = round(len(plain_urls) / with_render, 1)
    figures["render_pages_per_s_beside_plain"] = round(R_PAGES / beside["render_wall_s"], 1)
    print(f"scrapejobs R: {figures}", flush=True)
    return figures


# the script: a click, a wait for a selector, a screenshot (of the whole page)
R_ACTIONS = [
    {"type": "click", "selector": "#product h1"},
    {"type": "wait", "selector": ".price"},
    {"type": "screenshot", "full_page": True},
]


def _with_actions(
    api: Any,
    timed: Callable[[list[str], dict[str, Any]], tuple[dict[str, Any], float]],
    urls: list[str],
    plain_wall: float,
    renderer_pid: int,
) -> dict[str, Any]:
    """R's pages again with ``R_ACTIONS``: pages/s against plain rendering's, and the browser's
    peak memory while it takes full-page screenshots (kept in the storage emulator)."""
    from bench.stack_run import all_results

    with BrowserMemory(renderer_pid) as memory:
        job, wall = timed(urls, {"render": {"actions": R_ACTIONS}})
    results = all_results(api, job["id"])
    shots = [
        r for r in results if r["status"] == "succeeded" and r["data"]["actions"]["screenshots"]
    ]
    return {
        "actions_pages_per_s": round(len(urls) / wall, 1),
        "actions_pages_with_screenshot": len(shots),
        "actions_ratio": round(plain_wall / wall, 3),
        "actions_browser_peak_rss_mb": round(memory.peak_rss / 1e6),
    }


def run_model_workload(
    api: Any, model: ModelServer, ai_urls: list[str], plain_urls: list[str], timeout_s: float
) -> dict[str, Any]:
    """M: plain pages alone, then beside a job whose pages went to the model once all of them
    are fetched and handed on (the model's work, not the fetch of its pages, is what runs
    beside), then alone again: each set of runs after one unmeasured run; the most model
    calls at once against the default cap.

    The ratio is the best run beside model work over the mean of the best run before it and
    the best run after it: this machine's figures climb over minutes (the emulators warm up),
    so a run after the model work is faster for that alone, and the runs beside it fall in
    between. Each set starts unmeasured because a host idle for over a second gives its slots
    back (SCRAPEJOBS_WARM_SLOT_IDLE_S) and the first job after that takes them again: the
    set beside model work and the set after it both start after such a pause."""
    from bench.stack_run import PlainRuns, wait_completed
    from scrapejobs_shared.config.settings import CommonSettings

    measured = PlainRuns(api, plain_urls, timeout_s).measured

    def open_tasks(job_id: str) -> int:
        counts = api.get(f"/v1/jobs/{job_id}").json()["counts"]
        return sum(counts.get(s, 0) for s in ("queued", "running", "processing"))

    before = measured(2)
    stage = {"ai": {"prompt": "Summarise the product in one line.", "schema": M_SCHEMA}}
    started = time.perf_counter()
    response = api.post("/v1/jobs", json={"urls": ai_urls, "pipeline": [stage]})
    if response.status_code != 202:
        raise RuntimeError(f"ai job refused: HTTP {response.status_code} {response.text}")
    ai_job = response.json()["id"]
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:  # every page fetched and handed on: the model at work
        counts = api.get(f"/v1/jobs/{ai_job}").json()["counts"]
        if not counts.get("queued") and not counts.get("running"):
            break
        time.sleep(0.1)
    beside = measured(3)
    still_open = open_tasks(ai_job)  # > 0: the model work ran through both measurements
    done = wait_completed(api, ai_job, timeout_s=timeout_s)
    ai_wall = time.perf_counter() - started
    after = measured(2)
    alone = round((max(before) + max(after)) / 2, 1)
    figures: dict[str, Any] = {
        "plain_pages_per_s_alone": alone,
        "plain_pages_per_s_beside_ai": max(beside),
        "plain_ratio": round(max(beside) / alone, 3),
        "plain_runs": {"alone_before": before, "beside_ai": beside, "alone_after": after},
        "ai_pages": len(ai_urls),
        "ai_pages_per_s": round(len(ai_urls) / ai_wall, 2),
        "ai_tasks_open_after_plain": still_open,
        "ai_counts": done.get("counts"),
        "ai_usage": done.get("ai_usage"),
        "model_delay_s": model.delay_s,
        "model_most_in_flight": model.most_in_flight,
        "model_cap": CommonSettings.model_fields["ai_max_in_flight"].default,
    }
    print(f"scrapejobs M: {figures}", flush=True)
    return figures


def run_firecrawl_workload(
    api: Any,
    urls: list[str],
    rounds: int,
    timeout_s: float,
    forget: Callable[[], None] = lambda: None,
) -> dict[str, Any]:
    """F: ``urls`` as a Firecrawl batch (markdown) and as a native job with the markdown
    format, alternately, each polled every ``F_POLL_S`` on its own status endpoint (a Firecrawl
    status answer carries a page of Documents: its SDK polls every 2 s); pages/s from the
    submission to the job's own ``finished_at`` (so the poll interval does not round the
    figure), best of ``F_ROUNDS`` (or ``rounds``, if more) each, after one unmeasured native
    run.

    Every run asks for URLs no run asked for before (a query the catalog ignores): a Firecrawl
    batch keeps its pages for reuse (``maxAge``, 4 hours by default), so the headline is what
    pages seen for the first time cost, reading and writing the page cache included. The
    labelled extra figure ``reused_pages_per_s`` is one more Firecrawl batch of the last one's
    URLs (its pages reused). ``forget`` runs before each measured run but that one, whose pages
    the page cache finds in the last batch's results: the results of the runs before it
    deleted (bench/fresh_results.py; a Firecrawl batch's status lists its results)."""
    from datetime import datetime

    def pages_per_s(started: float, job_id: str) -> float:
        job = api.get(f"/v1/jobs/{job_id}").json()
        if job["status"] != "completed" or job["counts"].get("succeeded") != len(urls):
            raise RuntimeError(f"job {job_id} ended {job['status']}: {job['counts']}")
        finished = datetime.fromisoformat(job["finished_at"]).timestamp()
        return round(len(urls) / (finished - started), 1)

    def polled(path: str, done: Callable[[dict[str, Any]], bool]) -> None:
        deadline = time.monotonic() + timeout_s
        while not done(api.get(path).json()):
            if time.monotonic() > deadline:
                raise TimeoutError(f"{path} not done after {timeout_s} s")
            time.sleep(F_POLL_S)

    asked = 0

    def fresh() -> list[str]:
        nonlocal asked
        asked += 1
        return [f"{url}?run={asked}" for url in urls]

    def native() -> float:
        started = time.time()
        body = {"urls": fresh(), "options": {"formats": ["markdown"]}}
        response = api.post("/v1/jobs", json=body)
        response.raise_for_status()
        job_id = response.json()["id"]
        polled(f"/v1/jobs/{job_id}", lambda job: job["status"] in ("completed", "cancelled"))
        return pages_per_s(started, job_id)

    def firecrawl(asking: list[str]) -> float:
        started = time.time()
        response = api.post("/v2/batch/scrape", json={"urls": asking, "formats": ["markdown"]})
        response.raise_for_status()
        batch = response.json()["id"]
        polled(f"/v2/batch/scrape/{batch}", lambda status: status["status"] != "scraping")
        return pages_per_s(started, batch)

    native()  # unmeasured: the catalog renders these pages the first time they are asked for
    runs: dict[str, list[float]] = {"native": [], "firecrawl": []}
    last: list[str] = []
    for _ in range(max(rounds, F_ROUNDS)):
        forget()
        runs["native"].append(native())
        forget()
        last = fresh()
        runs["firecrawl"].append(firecrawl(last))
    reused = firecrawl(last)  # not after forget(): the page cache names the last batch's results
    figures = {
        "pages": len(urls),
        "native_pages_per_s": max(runs["native"]),
        "firecrawl_pages_per_s": max(runs["firecrawl"]),
        "ratio": round(max(runs["firecrawl"]) / max(runs["native"]), 3),
        "reused_pages_per_s": reused,
        "reused_ratio": round(reused / max(runs["native"]), 3),
        "runs": runs,
        "poll_s": F_POLL_S,
    }
    print(f"scrapejobs F: {figures}", flush=True)
    return figures


def browser_workloads(
    api: Any,
    stack: Any,
    render: tuple[str, list[str]] | None,
    auto_render: tuple[str, int] | None,
    timeout_s: float,
) -> dict[str, Any]:
    """R and U, given their arguments, when the stack has a renderer."""
    figures: dict[str, Any] = {}
    skipped = {"skipped": "no chromium: apt-get install chromium"}
    if render is not None:
        site_url, plain = render
        figures["R"] = (
            skipped
            if stack.renderer is None
            else run_render_workload(api, stack.renderer.pid, site_url, plain, timeout_s)
        )
    if auto_render is not None:
        figures["U"] = (
            skipped
            if stack.renderer is None
            else run_auto_render_workload(api, *auto_render, timeout_s)
        )
    return figures


def run_auto_render_workload(
    api: Any, site_url: str, start: int, timeout_s: float
) -> dict[str, Any]:
    """U: the same mixed URLs plain, with ``render: "auto"`` and with ``render: true``."""
    from bench.catalog_site import expected
    from bench.stack_run import all_results, submit_job, wait_completed

    urls = [
        f"{site_url}/{'scripted' if n % U_SCRIPTED_EVERY == 0 else 'product'}/{n}"
        for n in range(start, start + U_PAGES)
    ]
    rows: dict[str, Any] = {}
    for name, options in (
        ("plain", {}),
        ("auto", {"render": "auto"}),
        ("render", {"render": True}),
    ):
        started = time.perf_counter()
        job, _ = submit_job(api, urls, options=options)
        wait_completed(api, job["id"], timeout_s=timeout_s)
        wall = time.perf_counter() - started
        results = all_results(api, job["id"])
        right = sum(
            r["status"] == "succeeded" and r["data"] == expected("/" + r["url"].split("/", 3)[3])
            for r in results
        )
        rows[name] = {
            "pages_per_s": round(len(urls) / wall, 1),
            "wall_s": round(wall, 2),
            "rendered_share": round(sum(bool(r.get("rendered")) for r in results) / len(urls), 3),
            "right_share": round(right / len(urls), 3),
        }
        print(f"scrapejobs U {name}: {rows[name]}", flush=True)
    auto = rows["auto"]["pages_per_s"]
    rows["auto_vs_plain"] = round(auto / rows["plain"]["pages_per_s"], 2)
    rows["auto_vs_render"] = round(auto / rows["render"]["pages_per_s"], 2)
    rows["pages"] = U_PAGES
    rows["scripted_share"] = 1 / U_SCRIPTED_EVERY
    return rows


@dataclass(frozen=True, slots=True)
class LaterRun:
    """What a later workload runs on: the stack started, its API, where logs go."""

    api: Any  # httpx.Client on the dispatcher
    stack: Any  # scrapejobs_devstack.stack.Stack
    log_dir: Path
    register: Callable[[str, Callable[[], None]], None]
    rounds: int
    timeout_s: float
    forget: Callable[[], None]  # the results of the runs before deleted (fresh_results.py)


@dataclass(frozen=True, slots=True)
class LaterWorkload:
    """A workload of a module of its own, run on the stack after the others: its letter."""

    name: str
    run: Callable[[LaterRun], dict[str, Any]]


def later_workloads(site_url: str, pages: int, only: str) -> list[LaterWorkload]:
    """T (tenants), K (a monitor's check), D (documents beside pages), O (scans read by OCR,
    beside pages), P (pages through a proxy), S (a search scraping its results), those in
    ``only``."""
    found: list[LaterWorkload] = []
    if "T" in only:
        from bench.tenant_workload import T_LARGE_PAGES, T_SMALL_JOBS, run_tenant_workload

        first = pages + C_PAGES + R_PLAIN_PAGES + M_PLAIN_PAGES + M_AI_PAGES + U_PAGES
        small = [site_url + p for p in bench_paths(2 * T_SMALL_JOBS, start=first)]
        large = [site_url + p for p in bench_paths(T_LARGE_PAGES, start=first + 2 * T_SMALL_JOBS)]

        def tenants(ran: LaterRun) -> dict[str, Any]:
            url = ran.stack.config.dispatcher_url
            figures = run_tenant_workload(ran.api, url, small, large, ran.timeout_s)
            print(f"scrapejobs T: {figures}", flush=True)
            return figures

        found.append(LaterWorkload("T", tenants))
    if "K" in only:
        from bench.monitor_workload import run_monitor_workload

        k_urls = [site_url + p for p in bench_paths(K_PAGES)]

        def monitor(ran: LaterRun) -> dict[str, Any]:
            logs = (ran.stack.worker.log_path, ran.stack.dispatcher.log_path)
            return run_monitor_workload(
                ran.api, site_url, k_urls, logs, ran.rounds, ran.timeout_s, ran.forget
            )

        found.append(LaterWorkload("K", monitor))
    if "D" in only:
        from bench.document_workload import (
            run_document_workload,
            serve_documents,
        )

        plain = _plain_of_another_host(site_url)

        def documents(ran: LaterRun) -> dict[str, Any]:
            served = serve_documents(ran.log_dir, ran.register)
            return run_document_workload(ran.api, served, plain, ran.timeout_s)

        found.append(LaterWorkload("D", documents))
    if "O" in only:
        from bench.ocr_workload import run_ocr_workload, serve_scans

        plain_o = _plain_of_another_host(site_url)

        def scans(ran: LaterRun) -> dict[str, Any]:
            served = serve_scans(ran.log_dir, ran.register)
            return run_ocr_workload(ran.api, served, plain_o, ran.timeout_s)

        found.append(LaterWorkload("O", scans))
    return found + _through_the_network(site_url, only)


def _plain_of_another_host(site_url: str) -> list[str]:
    """The plain pages D and O run beside documents: the catalog's, under another address."""
    from bench.document_workload import D_PLAIN_HOST, D_PLAIN_PAGES

    plain_site = site_url.replace("127.0.0.1", D_PLAIN_HOST)
    return [plain_site + p for p in bench_paths(D_PLAIN_PAGES)]


def _through_the_network(site_url: str, only: str) -> list[LaterWorkload]:
    """P (pages through a proxy) and S (a search scraping its results), those in ``only``."""
    found: list[LaterWorkload] = []
    if "P" in only:
        from bench.proxy_workload import P_PAGES, P_ROUNDS, P_WARMUP_PAGES, run_proxy_workload

        def proxied(ran: LaterRun) -> dict[str, Any]:
            runs = 2 * max(ran.rounds, P_ROUNDS)  # direct, then through the proxy, each round
            sets = [
                [site_url + p for p in bench_paths(P_PAGES, start=n * P_PAGES)]
                for n in range(runs + 1)
            ]
            return run_proxy_workload(ran, sets[1:], sets[0][:P_WARMUP_PAGES])

        found.append(LaterWorkload("P", proxied))
    if "S" in only:
        from bench.proxy_workload import P_PAGES, P_ROUNDS
        from bench.search_workload import S_RESULTS, S_ROUNDS, run_search_workload

        def searched(ran: LaterRun) -> dict[str, Any]:
            first = (2 * max(ran.rounds, P_ROUNDS) + 1) * P_PAGES  # past P's pages: fresh ones
            sets = [
                [site_url + p for p in bench_paths(S_RESULTS, start=first + n * S_RESULTS)]
                for n in range(S_ROUNDS)
            ]
            return run_search_workload(ran, sets)

        found.append(LaterWorkload("S", searched))
    return found


def _median(values: list[float]) -> float | None:
    ordered = sorted(values)
    return ordered[len(ordered) // 2] if ordered else None


def run_workloads(
    site_url: str,
    pages: int,
    log_dir: Path,
    register: Callable[[str, Callable[[], None]], None],
    rounds: int = 1,
    celery: bool = True,
    only: str = "BC",
    worker_processes: int = WORKER_PROCESSES,
) -> dict[str, Any]:
    """The workloads in ``only`` (A, B, C: C includes L and the push floor; R: rendering; U:
    render auto; M: model work; F: Firecrawl's batch API; T: tenants; K: a monitor's check)
    over the catalog at ``site_url`` (started with ``extra_hosts`` for B), Celery + Redis
    first, then one stack."""
    log_dir.mkdir(parents=True, exist_ok=True)
    port = int(site_url.rsplit(":", 1)[1])
    paths = bench_paths(pages)
    workloads: dict[str, list[str]] = {}
    if "A" in only:
        workloads["A"] = [site_url + p for p in paths]
    if "B" in only:
        workloads["B"] = host_urls(port, paths, URLS_PER_HOST)
    one_url = None
    if "C" in only:
        one_url = [site_url + p for p in bench_paths(C_PAGES, start=pages)]
    render = None
    if "R" in only:
        plain_site = site_url.replace("127.0.0.1", R_PLAIN_HOST)
        plain = [plain_site + p for p in bench_paths(R_PLAIN_PAGES, start=pages + C_PAGES)]
        render = (site_url, plain)
    auto_render = None
    if "U" in only:
        auto_render = (site_url, pages + C_PAGES + R_PLAIN_PAGES + M_PLAIN_PAGES + M_AI_PAGES)
    firecrawl = None
    if "F" in only:
        first = PRODUCTS - 4 * WARMUP_PAGES - F_PAGES  # below the warm-up's products
        firecrawl = [site_url + p for p in bench_paths(F_PAGES, start=first)]
    later = later_workloads(site_url, pages, only)
    model = None
    if "M" in only:
        plain_site = site_url.replace("127.0.0.1", M_PLAIN_HOST)
        start = pages + C_PAGES + R_PLAIN_PAGES
        plain = [plain_site + p for p in bench_paths(M_PLAIN_PAGES, start=start)]
        ai_urls = [site_url + p for p in bench_paths(M_AI_PAGES, start=start + M_PLAIN_PAGES)]
        model_answer = Answer(json.dumps({"summary": "A product."}), 900, 12)
        model = (ModelServer(model_answer, delay_s=M_MODEL_DELAY_S).start(), ai_urls, plain)
        register("model server", model[0].stop)
    warmup = [site_url + p for p in bench_paths(WARMUP_PAGES, start=PRODUCTS - 4 * WARMUP_PAGES)]
    report: dict[str, Any] = {"pages": pages, "rounds": rounds}
    if celery:
        report["celery"] = run_celery_workloads(
            workloads, warmup[:40], log_dir, register, rounds, 600, one_url
        )
    else:
        report["celery"] = {"skipped": "--skip-celery"}
    report["scrapejobs"] = run_stack_workloads(
        workloads,
        warmup,
        log_dir,
        register,
        rounds,
        600,
        worker_processes,
        one_url,
        render,
        model,
        firecrawl,
        auto_render,
        later,
    )
    return report


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--pages", type=int, default=5000)
    parser.add_argument("--rounds", type=int, default=2)
    parser.add_argument(
        "--only",
        default="ABCRUMFTKDOPS",
        help="workloads: A, B, C (C includes L), R (rendering), U (render auto), M (model "
        "work), F (Firecrawl's batch API), T (tenants sharing a host), K (a monitor's check), "
        "D (documents beside pages), O (scans by OCR), P (pages through a proxy), S (search)",
    )
    parser.add_argument("--skip-celery", action="store_true")
    parser.add_argument("--worker-processes", type=int, default=WORKER_PROCESSES)
    parser.add_argument("--output", type=Path, default=None)
    args = parser.parse_args(argv)
    stops: list[tuple[str, Callable[[], None]]] = []

    def register(name: str, stop: Callable[[], None]) -> None:
        stops.append((name, stop))

    def stop_on_signal(signum: int, frame: object) -> None:
        raise SystemExit(130)  # the finally below stops what was started

    signal.signal(signal.SIGTERM, stop_on_signal)
    log_dir = Path(tempfile.mkdtemp(prefix="scrapejobs-workloads-"))
    try:
        site: ManagedProcess
        hosts = -(-args.pages // URLS_PER_HOST)
        prerender = args.pages + C_PAGES + R_PLAIN_PAGES + M_PLAIN_PAGES + M_AI_PAGES + U_PAGES
        site, site_url = start_site(log_dir, prerender=prerender, extra_hosts=hosts)
        register("site", site.stop)
        report = run_workloads(
            site_url,
            args.pages,
            log_dir,
            register,
            args.rounds,
            celery=not args.skip_celery,
            only=args.only,
            worker_processes=args.worker_processes,
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
