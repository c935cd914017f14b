"""The Celery + Redis baseline: the same pages and extraction through a Celery worker.

What a Celery user would run instead of the platform (bench/celery_app.py): a ``redis-server`` as
broker and result backend, a Celery worker (prefork pool, concurrency 2, late acks, prefetch 1,
reject on worker loss), one task per URL fetching with ``requests`` and extracting with parsel.

The run:

1. starts ``redis-server`` on a free loopback port (``--save "" --appendonly no``) and the
   worker (``python -m celery -A bench.celery_app worker``), each in its own process group;
2. enqueues a warm-up of ``WARMUP`` pages and waits for their results (imports, pools);
3. ``passes`` times: enqueues the N measured URLs (``send_task``, one message per URL), waits for
   every result (Redis result backend), checks every value against the site's true values;
4. stops the worker and redis-server by process group, whatever happened.

Per pass: pages/s = N ÷ (last result - first enqueue); CPU = psutil user+system of the worker's
process tree (main process + pool children) and of redis-server, and ``time.process_time()`` of
this process (the enqueueing client), reported apart. The figures are the medians of the passes.

Skipped (``None``, with a note) when there is no ``redis-server`` on PATH or the ``bench``
dependency group (celery, redis, requests) is not installed.
"""

from __future__ import annotations

import contextlib
import shutil
import statistics
import sys
import threading
import time
from collections.abc import Callable, Iterator, Sequence
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

import psutil

from bench.bare_loop import PerPage
from bench.floors import Started
from bench.stack_run import tree_cpu_s
from scrapejobs_devstack.processes import ManagedProcess, free_port, start_process, tail

REPO_ROOT = Path(__file__).resolve().parent.parent
CONCURRENCY = 2  # like the bare c=2 loop and the Pub/Sub emulator's 2 pushes at a time
LOG_LEVEL = "INFO"  # what Celery's docs run workers with: two log lines per task
READY_TIMEOUT_S = 60.0
INSTALL_HINT = (
    "install it with `apt-get install redis-server` (Debian/Ubuntu) or your OS's redis package"
)


@dataclass
class CeleryFigures(PerPage):
    name: str
    concurrency: int
    pages: int
    wall_s: float  # first enqueue -> last result, median of the passes
    cpu_s: float  # worker tree + redis-server, median of the passes' sums
    worker_cpu_s: float
    redis_cpu_s: float
    client_cpu_s: float  # this process: enqueueing + waiting for the results
    enqueue_s: float  # the time to enqueue the N tasks (the client's loop)
    errors: int
    mismatches: int
    worker_rss_mb: float  # main process + pool children, after the last pass
    redis_rss_mb: float
    runs_wall_s: list[float] = field(default_factory=list)
    runs_cpu_s: list[float] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)

    def per_1000(self, cpu_s: float) -> float:
        return cpu_s * 1000 / self.pages if self.pages else 0.0

    def as_dict(self) -> dict[str, Any]:
        return {
            **asdict(self),
            "pages_per_s": round(self.pages_per_s, 2),
            "cpu_s_per_1000_pages": round(self.cpu_s_per_1000, 3),
            "cpu_s_per_1000_pages_split": {
                "worker": round(self.per_1000(self.worker_cpu_s), 3),
                "redis": round(self.per_1000(self.redis_cpu_s), 3),
                "client": round(self.per_1000(self.client_cpu_s), 3),
            },
        }


def unavailable() -> str | None:
    """Why the Celery run cannot happen here, or None."""
    if shutil.which("redis-server") is None:
        return f"no redis-server on PATH; {INSTALL_HINT}"
    try:
        import celery  # noqa: F401
        import redis  # noqa: F401
        import requests  # noqa: F401
    except ImportError as exc:
        return f"{exc.name} is not installed: run `uv sync --group bench` (make bench does)"
    return None


def start_redis(log_dir: Path, deadline: float) -> tuple[ManagedProcess, str]:
    import redis

    binary = shutil.which("redis-server")
    assert binary is not None
    port = free_port()
    argv = [
        binary,
        "--bind",
        "127.0.0.1",
        "--port",
        str(port),
        "--protected-mode",
        "yes",
        "--save",
        "",
        "--appendonly",
        "no",
        "--daemonize",
        "no",
        "--databases",
        "1",
        "--loglevel",
        "warning",
    ]
    process = start_process("redis-server", argv, {}, log_dir)
    url = f"redis://127.0.0.1:{port}/0"
    client = redis.Redis(host="127.0.0.1", port=port, socket_timeout=2, socket_connect_timeout=2)
    try:
        while True:
            if not process.alive():
                raise RuntimeError(f"redis-server exited early:\n{tail(process.log_path)}")
            with contextlib.suppress(redis.RedisError):
                if client.ping():
                    return process, url
            if time.monotonic() > deadline:
                raise TimeoutError(f"redis-server not ready:\n{tail(process.log_path)}")
            time.sleep(0.1)
    finally:
        client.close()


def start_worker(redis_url: str, log_dir: Path) -> ManagedProcess:
    from bench.celery_app import REDIS_URL_ENV

    argv = [
        sys.executable,
        "-m",
        "celery",
        "-A",
        "bench.celery_app",
        "worker",
        "--pool=prefork",
        f"--concurrency={CONCURRENCY}",
        f"--loglevel={LOG_LEVEL}",
        "--hostname=bench@127.0.0.1",
    ]
    env = {REDIS_URL_ENV: redis_url, "PYTHONPATH": str(REPO_ROOT)}
    return start_process("celery-worker", argv, env, log_dir)


def tree_rss_mb(pid: int) -> float:
    try:
        root = psutil.Process(pid)
        processes = [root, *root.children(recursive=True)]
    except psutil.NoSuchProcess:
        return 0.0
    total = 0
    for process in processes:
        with contextlib.suppress(psutil.Error):
            total += process.memory_info().rss
    return round(total / 2**20, 1)


class Pass:
    """One batch of URLs through the worker: enqueue all, wait for all, check all."""

    def __init__(self, app: Any, worker: ManagedProcess, deadline: float) -> None:
        self._app = app
        self._worker = worker
        self._deadline = deadline

    def run(
        self, urls: Sequence[str], expected: Callable[[str], dict[str, Any]]
    ) -> tuple[float, float, int, int]:
        """(wall from the first enqueue to the last result, enqueue time, errors, mismatches)."""
        from celery.result import ResultSet

        from bench.celery_app import TASK_NAME

        started = time.perf_counter()
        results = [self._app.send_task(TASK_NAME, args=[url]) for url in urls]
        enqueued = time.perf_counter()
        values = self._join(ResultSet(results, app=self._app))
        wall = time.perf_counter() - started
        # the states come from the results' cache, filled while joining: no Redis round trip
        ok = [result.state == "SUCCESS" for result in results]
        mismatches = sum(
            1
            for url, value, good in zip(urls, values, ok, strict=True)
            if good and value != expected(url)
        )
        return wall, enqueued - started, ok.count(False), mismatches

    def _join(self, results: Any) -> list[Any]:
        """Every result's value, in order (a failure's value is its exception). Polls the
        worker's liveness every few seconds, so a dead worker fails the run at once."""
        from celery.exceptions import TimeoutError as ResultTimeout

        while True:
            left = self._deadline - time.monotonic()
            if left <= 0:
                done = results.completed_count()
                raise TimeoutError(f"Celery: {done} of {len(results)} results in at the deadline")
            if not self._worker.alive():
                raise RuntimeError(f"celery worker exited:\n{tail(self._worker.log_path)}")
            with contextlib.suppress(ResultTimeout):
                values: list[Any] = results.join_native(
                    timeout=min(left, 5.0), propagate=False, interval=0.05
                )
                return values


@contextlib.contextmanager
def celery_worker(
    log_dir: Path, register: Callable[[str, Callable[[], None]], None], deadline: float
) -> Iterator[tuple[Any, ManagedProcess, ManagedProcess]]:
    """redis-server and the prefork worker, started, and the app; both stopped on exit.
    ``register`` records the stop action for the caller's cleanup (errors, signals) too."""
    from bench.celery_app import make_app

    started = Started()
    register("celery + redis", started.stop)
    app: Any = None
    try:
        redis_server, redis_url = start_redis(log_dir, deadline)
        started.add(redis_server)
        worker = started.add(start_worker(redis_url, log_dir))
        app = make_app(redis_url)
        yield app, worker, redis_server
    finally:
        if app is not None:
            with contextlib.suppress(Exception):
                app.close()
        started.stop()


def run_celery(
    urls: Sequence[str],
    warmup: Sequence[str],
    expected: Callable[[str], dict[str, Any]],
    log_dir: Path,
    register: Callable[[str, Callable[[], None]], None],
    timeout_s: float,
    passes: int = 3,
) -> CeleryFigures:
    """Start redis-server and the worker, warm up, run ``passes`` measured passes over
    ``urls``, stop both. ``register`` records the stop action for the caller's cleanup (errors,
    signals); it also runs here, so the processes are gone before anything else is measured."""
    deadline = time.monotonic() + timeout_s
    with celery_worker(log_dir, register, deadline) as (app, worker, redis_server):
        batch = Pass(app, worker, min(deadline, time.monotonic() + READY_TIMEOUT_S))
        _, _, warm_errors, warm_mismatches = batch.run(warmup, expected)  # also: worker ready
        if warm_errors or warm_mismatches:
            raise RuntimeError(
                f"Celery warm-up: {warm_errors} errors, {warm_mismatches} wrong values; "
                f"worker log:\n{tail(worker.log_path)}"
            )
        batch = Pass(app, worker, deadline)
        runs: list[dict[str, float]] = []
        errors = mismatches = 0
        for _ in range(passes):
            before = (tree_cpu_s(worker.pid), tree_cpu_s(redis_server.pid), time.process_time())
            wall, enqueue_s, run_errors, run_mismatches = batch.run(urls, expected)
            after = (tree_cpu_s(worker.pid), tree_cpu_s(redis_server.pid), time.process_time())
            worker_cpu, redis_cpu, client_cpu = (a - b for a, b in zip(after, before, strict=True))
            runs.append(
                {
                    "wall": wall,
                    "enqueue": enqueue_s,
                    "worker": worker_cpu,
                    "redis": redis_cpu,
                    "client": client_cpu,
                    "cpu": worker_cpu + redis_cpu,
                }
            )
            errors += run_errors
            mismatches += run_mismatches
        median = {key: statistics.median(run[key] for run in runs) for key in runs[0]}
        return CeleryFigures(
            name=f"celery c={CONCURRENCY}",
            concurrency=CONCURRENCY,
            pages=len(urls),
            wall_s=median["wall"],
            cpu_s=median["cpu"],
            worker_cpu_s=median["worker"],
            redis_cpu_s=median["redis"],
            client_cpu_s=median["client"],
            enqueue_s=median["enqueue"],
            errors=errors,
            mismatches=mismatches,
            worker_rss_mb=tree_rss_mb(worker.pid),
            redis_rss_mb=tree_rss_mb(redis_server.pid),
            runs_wall_s=[round(run["wall"], 3) for run in runs],
            runs_cpu_s=[round(run["cpu"], 3) for run in runs],
            notes=[
                f"prefork x{CONCURRENCY}, acks_late, prefetch 1, reject_on_worker_lost, "
                f"requests + parsel, Redis broker + result backend, loglevel {LOG_LEVEL}",
                "CPU: worker process tree + redis-server; the client's CPU is apart",
            ],
        )


def run_celery_one_at_a_time(
    urls: Sequence[str],
    warmup: Sequence[str],
    log_dir: Path,
    register: Callable[[str, Callable[[], None]], None],
    timeout_s: float,
    clients: int,
) -> dict[str, Any]:
    """Workload C for Celery: ``clients`` threads, each sending one task and waiting for its
    result before the next (as the seeds' examples use a queue). Tasks per second over all."""
    import concurrent.futures

    from bench.celery_app import TASK_NAME

    deadline = time.monotonic() + timeout_s
    with celery_worker(log_dir, register, deadline) as (app, worker, _):
        Pass(app, worker, min(deadline, time.monotonic() + READY_TIMEOUT_S)).run(
            warmup, lambda _: {}
        )
        pending = list(urls)
        lock = threading.Lock()
        errors = 0

        def client() -> None:
            nonlocal errors
            while True:
                with lock:
                    if not pending:
                        return
                    url = pending.pop()
                result = app.send_task(TASK_NAME, args=[url])
                try:
                    result.get(timeout=max(deadline - time.monotonic(), 1), interval=0.005)
                except Exception:
                    with lock:
                        errors += 1

        started = time.perf_counter()
        with concurrent.futures.ThreadPoolExecutor(clients) as pool:
            for future in [pool.submit(client) for _ in range(clients)]:
                future.result()
        wall = time.perf_counter() - started
    return {
        "jobs": len(urls),
        "clients": clients,
        "wall_s": round(wall, 3),
        "jobs_per_s": round(len(urls) / wall, 1),
        "errors": errors,
    }
