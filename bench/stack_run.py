"""The full-stack run: emulators + dispatcher + worker (``scrapejobs_devstack.Stack``), one job.

Measured around ONE job of N URLs (after a small warm-up job):

* end-to-end pages/s: N / (time the poller first sees ``completed`` - time before the POST);
* CPU-seconds per 1,000 pages of the worker (psutil user+system, children included), and of
  the dispatcher and both emulators (whole process trees: gcloud wrapper + Java);
* latency submit → result: each result's ``fetched_at`` minus the wall-clock time of the POST;
* the worker's service time per task: from ``duration_ms`` in the worker's JSON log lines when
  the worker logs it (``"task processed"``), else derived (see ``service_time``);
* worker peak RSS: sampled every 0.2 s in a thread, and the kernel's VmHWM;
* a Firestore probe: the worker's per-task store calls timed from this process;
* the time to accept a 10,000-URL submission (that job is cancelled at once, not awaited).
"""

from __future__ import annotations

import asyncio
import contextlib
import dataclasses
import json
import os
import threading
import time
import uuid
from collections.abc import Callable, Iterable, Iterator
from datetime import datetime, timedelta
from pathlib import Path
from typing import Any

import httpx
import psutil

from bench.bare_loop import percentile
from bench.catalog_site import FIELDS
from scrapejobs_devstack.processes import free_port
from scrapejobs_devstack.stack import Stack, StackConfig
from scrapejobs_shared.messaging.topology import DEFAULT_TOPOLOGY
from scrapejobs_shared.ports.batch_store import BatchClaim

BENCH_TOPOLOGY = dataclasses.replace(DEFAULT_TOPOLOGY, min_backoff_s=1, max_backoff_s=5)
POLL_S = 0.25
# One worker process per core, as Celery's baseline runs two prefork processes (an instance per
# vCPU in production). Jobs use the options a user gets by default: the catalog is one host and
# its default per-host limit (8 slots) is shared by both processes.
WORKER_PROCESSES = 2
PASSES = 3  # measured jobs; the figures are the median pass's, like the baselines'
LOG_TIMING_MESSAGE = "task processed"  # the worker, one line per task (older workers)
LOG_BATCH_MESSAGE = "batch processed"  # the worker, one line per Pub/Sub message (a batch)
LOG_SUBMIT_MESSAGE = "job submitted"  # the dispatcher, one line per accepted job
LOG_COALESCED_MESSAGE = "submissions coalesced"  # the dispatcher, one line per coalesced commit
LOG_SWEPT_MESSAGE = "host slots swept"  # the worker's host-slot upkeep that used the store


def tree_cpu_s(pid: int) -> float:
    """user+system CPU of a process and all its live descendants (children's too)."""
    try:
        root = psutil.Process(pid)
        processes = [root, *root.children(recursive=True)]
    except psutil.NoSuchProcess:
        return 0.0
    total = 0.0
    for process in processes:
        with contextlib.suppress(psutil.NoSuchProcess, psutil.AccessDenied):
            t = process.cpu_times()
            total += t.user + t.system + t.children_user + t.children_system
    return total


class RssSampler:
    """Peak RSS of a process and its children together (a worker may run several processes
    under one supervisor), sampled every ``interval_s`` in a daemon thread."""

    def __init__(self, pid: int, interval_s: float = 0.2) -> None:
        self._process = psutil.Process(pid)
        self._interval_s = interval_s
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, name="rss-sampler", daemon=True)
        self.peak = 0
        self.samples = 0

    def __enter__(self) -> RssSampler:
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._stop.set()
        self._thread.join(timeout=2)

    def _run(self) -> None:
        while not self._stop.is_set():
            with contextlib.suppress(psutil.Error):
                tree = [self._process, *self._process.children(recursive=True)]
                self.peak = max(self.peak, sum(p.memory_info().rss for p in tree))
                self.samples += 1
            self._stop.wait(self._interval_s)


def vm_hwm_bytes(pid: int) -> int | None:
    """The kernel's peak resident set size (Linux ``VmHWM``) of ``pid`` and its children,
    summed (each process's own peak)."""
    pids = [pid]
    with contextlib.suppress(psutil.Error):
        pids += [child.pid for child in psutil.Process(pid).children(recursive=True)]
    peaks = [_vm_hwm(p) for p in pids]
    known = [peak for peak in peaks if peak is not None]
    return sum(known) if known else None


def _vm_hwm(pid: int) -> int | None:
    with contextlib.suppress(OSError, ValueError):
        for line in Path(f"/proc/{pid}/status").read_text().splitlines():
            if line.startswith("VmHWM:"):
                return int(line.split()[1]) * 1024
    return None


def bench_config(log_dir: Path, worker_env: dict[str, str] | None = None) -> StackConfig:
    return StackConfig(
        project_id="scrapejobs-bench",
        dispatcher_port=free_port(),
        worker_port=free_port(),
        renderer_port=free_port(),
        pubsub_port=free_port(),
        firestore_port=free_port(),
        storage_port=free_port(),
        log_dir=log_dir,
        topology=BENCH_TOPOLOGY,
        worker_processes=WORKER_PROCESSES,
        worker_env=dict(worker_env or {}),
    )


def submit(api: httpx.Client, urls: list[str]) -> tuple[dict[str, Any], float]:
    """POST the headline job (default options); returns the job and the seconds until the 202."""
    return submit_job(api, urls, {})


def submit_job(
    api: httpx.Client, urls: list[str], options: dict[str, Any]
) -> tuple[dict[str, Any], float]:
    """POST a job of ``urls`` with the bench's extraction and ``options``; returns the job and
    the seconds until the 202."""
    started = time.perf_counter()
    body = {"urls": urls, "extract": FIELDS, "options": options}
    response = api.post("/v1/jobs", json=body)
    accepted = time.perf_counter() - started
    if response.status_code != 202:
        raise RuntimeError(f"submission refused: HTTP {response.status_code} {response.text}")
    job: dict[str, Any] = response.json()
    return job, accepted


def one_url_job(
    api: httpx.Client,
    url: str,
    poll_s: float,
    timeout_s: float,
    params: dict[str, str] | None = None,
) -> float:
    """Submit a one-URL job of ``url`` and poll it every ``poll_s`` until it ends: its submit →
    ended seconds; raises if it did not succeed within ``timeout_s``."""
    started = time.perf_counter()
    response = api.post("/v1/jobs", params=params, json={"url": url, "extract": FIELDS})
    response.raise_for_status()
    job_id = response.json()["id"]
    deadline = time.monotonic() + timeout_s
    while True:
        job = api.get(f"/v1/jobs/{job_id}").json()
        if job["status"] in ("completed", "cancelled"):
            break
        if time.monotonic() > deadline:
            raise TimeoutError(f"job {job_id} not done after {timeout_s} s")
        time.sleep(poll_s)
    if job["counts"].get("succeeded") != 1:
        raise RuntimeError(f"one-URL job {job_id} did not succeed: {job}")
    return time.perf_counter() - started


def wait_completed(api: httpx.Client, job_id: str, timeout_s: float) -> dict[str, Any]:
    deadline = time.monotonic() + timeout_s
    job: dict[str, Any] = {}
    while time.monotonic() < deadline:
        job = api.get(f"/v1/jobs/{job_id}").json()
        counts = job.get("counts", {})
        if job.get("status") in ("completed", "cancelled") and not (
            counts.get("queued") or counts.get("running")
        ):
            if job["status"] != "completed":
                raise RuntimeError(f"job {job_id} ended {job['status']}: {counts}")
            return job
        time.sleep(POLL_S)
    raise TimeoutError(f"job {job_id} not completed after {timeout_s:.0f} s: {job}")


def all_results(api: httpx.Client, job_id: str) -> list[dict[str, Any]]:
    results: list[dict[str, Any]] = []
    token: str | None = None
    while True:
        params: dict[str, Any] = {"page_size": 500}
        if token:
            params["page_token"] = token
        response = api.get(f"/v1/jobs/{job_id}/results", params=params)
        response.raise_for_status()
        page = response.json()
        results.extend(page["results"])
        token = page.get("next_page_token")
        if not token:
            return results


def log_time(value: str) -> float:
    """A log line's ``time`` (ISO 8601) as a Unix timestamp."""
    return datetime.fromisoformat(value.replace("Z", "+00:00")).timestamp()


def log_entries(log_path: Path) -> Iterator[dict[str, Any]]:
    """The JSON objects of a service's log (one per line; other lines are skipped)."""
    with contextlib.suppress(OSError):
        for line in log_path.read_text(errors="replace").splitlines():
            if not line.startswith("{"):
                continue
            try:
                entry = json.loads(line)
            except ValueError:
                continue
            if isinstance(entry, dict):
                yield entry


def _of_job(entry: dict[str, Any], job_id: str, since: float) -> bool:
    """A log line of ``job_id``: by its ``job_id`` (or ``job_ids``) field, else by its
    ``time`` being after ``since``."""
    if "job_id" in entry:
        return bool(entry["job_id"] == job_id)
    if isinstance(entry.get("job_ids"), list):
        return job_id in entry["job_ids"]
    return "time" in entry and log_time(entry["time"]) >= since


def worker_log_timings(log_path: Path, job_id: str, since: float) -> dict[str, list[float]]:
    """Numeric ``*_ms`` fields of the worker's ``"task processed"`` lines for ``job_id``, and of
    its ``"batch processed"`` lines (keys prefixed ``batch:``).

    Lines without a ``job_id`` field count when their ``time`` is after ``since``.
    """
    timings: dict[str, list[float]] = {}
    for entry in log_entries(log_path):
        message = entry.get("message")
        if message == LOG_BATCH_MESSAGE:
            prefix = "batch:"
        elif message == LOG_TIMING_MESSAGE or "duration_ms" in entry:
            prefix = ""
        else:
            continue
        if not _of_job(entry, job_id, since):
            continue
        for key, value in entry.items():
            if key.endswith("_ms") and isinstance(value, int | float):
                timings.setdefault(prefix + key, []).append(float(value))
    return timings


def count_ops(entries: Iterable[dict[str, Any]]) -> dict[str, int] | None:
    """Sum of the integer ``firestore_*`` fields of ``entries``, with ``lines``: how many
    lines had one; None when none had."""
    totals: dict[str, int] = {}
    lines = 0
    for entry in entries:
        fields = {
            k: v
            for k, v in entry.items()
            if k.startswith("firestore_") and isinstance(v, int) and not isinstance(v, bool)
        }
        if fields:
            lines += 1
            for key, value in fields.items():
                totals[key] = totals.get(key, 0) + value
    return {**totals, "lines": lines} if lines else None


def _first_int(entry: dict[str, Any], *keys: str) -> float | None:
    for key in keys:
        value = entry.get(key)
        if isinstance(value, int) and not isinstance(value, bool):
            return float(value)
    return None


def firestore_ops(
    worker_log: Path, dispatcher_log: Path, job_id: str, since: float, pages: int
) -> dict[str, Any]:
    """Firestore documents read / written for the job, from the services' logs: the integer
    ``firestore_reads`` / ``firestore_writes`` (and any other ``firestore_*``) fields of the
    worker's ``"batch processed"`` lines (else of its ``"task processed"`` lines, never both:
    no double count) and of the dispatcher's ``"job submitted"`` line. Also the Pub/Sub
    messages the worker handled for the job (one ``"batch processed"`` line each, else one
    ``"task processed"`` line each) and the URLs per message. Fields absent: ``None``."""
    worker_entries = [e for e in log_entries(worker_log) if _of_job(e, job_id, since)]
    batches = [e for e in worker_entries if e.get("message") == LOG_BATCH_MESSAGE]
    tasks = [e for e in worker_entries if e.get("message") == LOG_TIMING_MESSAGE]
    # host-slot upkeep (looks for wanters, idle slots given back) belongs to no batch: its lines
    # from the job's window count, and the job ends with the last batch line
    end = max((log_time(e["time"]) for e in batches if "time" in e), default=None)
    swept = [
        e
        for e in worker_entries
        if e.get("message") == LOG_SWEPT_MESSAGE
        and end is not None
        and log_time(e["time"]) <= end + 1
    ]
    worker = count_ops([*batches, *swept]) or count_ops(tasks)
    submitted = [
        e
        for e in log_entries(dispatcher_log)
        if e.get("message") == LOG_SUBMIT_MESSAGE and e.get("job_id") == job_id
    ]
    dispatcher = count_ops(submitted)
    per_page: dict[str, float | None] = {}
    for op in ("reads", "writes", "deletes"):
        key = f"firestore_{op}"
        # both services must report the field: a part alone would understate the job's total
        parts = [part.get(key) for part in (worker, dispatcher) if part]
        known = len(parts) == 2 and all(isinstance(p, int) for p in parts)
        per_page[op] = round(sum(p or 0 for p in parts) / pages, 4) if known and pages else None
    messages = len(batches) or len(tasks)
    sizes = [size for e in batches if (size := _first_int(e, "urls", "tasks", "batch_size"))]
    message_bytes = [size for e in batches if (size := _first_int(e, "message_bytes"))]
    return {
        "worker": worker,
        "dispatcher": dispatcher,
        "per_page": per_page,
        "complete": worker is not None and dispatcher is not None,
        "messages": messages,
        "message_source": LOG_BATCH_MESSAGE if batches else LOG_TIMING_MESSAGE,
        "pages_per_message": round(pages / messages, 3) if messages else None,
        "urls_per_batch": _summary(sizes) if sizes else None,
        "message_bytes": _summary(message_bytes) if message_bytes else None,
    }


def _summary(values: Iterable[float]) -> dict[str, float]:
    listed = list(values)
    return {
        "n": len(listed),
        "mean": round(sum(listed) / len(listed), 2) if listed else 0.0,
        "p50": round(percentile(listed, 50), 2),
        "p95": round(percentile(listed, 95), 2),
        "max": round(max(listed), 2) if listed else 0.0,
    }


async def firestore_probe(
    project_id: str, tasks: int = 600, batch_size: int = 100, concurrency: int = 2
) -> dict[str, Any]:
    """The worker's Firestore calls for batches of successes, timed from this process against
    the same emulator, ``concurrency`` batches at a time like the emulator's pushes: one
    ``claim_batch`` and one ``settle`` of every task's result per batch (a batch that finishes
    within a flush interval). Also this process's CPU per task (the Firestore client's share of
    the worker's CPU) and the document reads and writes per task, counted by the adapter."""
    from google.cloud import firestore

    from scrapejobs_shared.adapters.firestore.job_store import FirestoreJobStore
    from scrapejobs_shared.delivery.batching import plan_batches, shards_for
    from scrapejobs_shared.domain.batch_transitions import FinishTask
    from scrapejobs_shared.domain.clock import utc_now
    from scrapejobs_shared.domain.jobspec import JobSpec
    from scrapejobs_shared.domain.records import BatchItem, JobRecord, TaskOutcome, task_id_for
    from scrapejobs_shared.domain.statuses import JobStatus, TaskStatus
    from scrapejobs_shared.observability.store_ops import counting
    from scrapejobs_shared.ports.batch_store import Claimed

    client = firestore.AsyncClient(project=project_id)
    store = FirestoreJobStore(client)
    try:
        now = utc_now()
        job_id = f"bench-probe-{uuid.uuid4().hex[:12]}"
        items = [
            BatchItem(task_id_for(job_id, str(i)), f"http://127.0.0.1/probe/{i}", index=i)
            for i in range(tasks)
        ]
        batches = plan_batches(job_id, items, batch_size, now, now + timedelta(days=1))
        job = JobRecord(
            id=job_id,
            status=JobStatus.RUNNING,
            spec=JobSpec.model_validate({"extract": FIELDS}),
            created_at=now,
            updated_at=now,
            expire_at=now + timedelta(days=1),
            total=tasks,
            counter_shards=shards_for(len(batches)),
        )
        await store.create_job(job, batches)
        timings: dict[str, list[float]] = {"claim_ms": [], "settle_ms": []}
        data = {"title": "x" * 30, "price": 12.5, "sku": "SK-00-000001", "tags": ["a", "b"]}
        pending = iter(batches)

        async def timed(step: str, call: Any) -> Any:
            started = time.perf_counter()
            result = await call
            timings[step].append((time.perf_counter() - started) * 1000)
            return result

        async def runner() -> None:
            for batch in pending:
                at = utc_now()
                claim = await timed(
                    "claim_ms",
                    store.claim_batch(BatchClaim(job_id, batch.id, at, at + timedelta(seconds=40))),
                )
                assert isinstance(claim, Claimed)
                outcome = TaskOutcome(
                    TaskStatus.SUCCEEDED, http_status=200, data=data, fetched_at=utc_now()
                )
                changes = [FinishTask(item.task_id, outcome) for item in claim.batch.items]
                await timed("settle_ms", store.settle(claim.handle, changes, utc_now(), at))

        cpu = time.process_time()
        started = time.perf_counter()
        with counting() as ops:
            await asyncio.gather(*(runner() for _ in range(concurrency)))
        wall = time.perf_counter() - started
        cpu = time.process_time() - cpu
        return {
            "tasks": tasks,
            "batch_size": batch_size,
            "concurrency": concurrency,
            "tasks_per_s": round(tasks / wall, 2),
            "client_cpu_ms_per_task": round(cpu * 1000 / tasks, 3),
            "reads_per_task": round(ops.reads / tasks, 3),
            "writes_per_task": round(ops.writes / tasks, 3),
            **{step: _summary(values) for step, values in timings.items() if values},
        }
    finally:
        client.close()


def machine_busy_s() -> float:
    """CPU-seconds all cores spent busy (not idle or waiting for I/O), machine-wide."""
    t = psutil.cpu_times()
    return sum(t) - t.idle - getattr(t, "iowait", 0.0)


def run_stack(
    site_url: str,
    site_pid: int,
    paths: list[str],
    warmup_paths: list[str],
    big_paths: list[str],
    truth: dict[str, dict[str, Any]],
    log_dir: Path,
    job_timeout_s: float,
    on_started: Callable[[Stack], None],
    paired_bare: Callable[[], float] | None = None,
    worker_env: dict[str, str] | None = None,
) -> dict[str, Any]:
    """Start a stack, run the measured job, return the figures. ``on_started`` registers the
    stack for cleanup (the caller stops it, also on errors and signals). ``paired_bare`` runs
    one pass of the bare loop over the same pages and returns its CPU-s per 1,000 pages: it is
    run right before the warm-up job and right after the last measured job, while the stack is
    idle, so that the jobs' worker CPU is compared with the bare loop's on the machine as it
    was then (their mean is the reference). ``worker_env``: settings of a labelled variant."""
    config = bench_config(log_dir, worker_env)
    stack = Stack(config)
    on_started(stack)
    started = time.perf_counter()
    stack.start()
    assert stack.worker is not None and stack.dispatcher is not None
    assert stack.pubsub is not None and stack.firestore is not None
    figures: dict[str, Any] = {"startup_s": round(time.perf_counter() - started, 2)}
    urls = [site_url + p for p in paths]

    with httpx.Client(base_url=config.dispatcher_url, timeout=300.0, trust_env=False) as api:
        # The bare passes bracket the warm-up and measured jobs rather than sit between them:
        # the pause of a bare pass would let the worker's warm host slots lapse, and the next
        # job would start cold, which the warm-up job is there to avoid.
        bare_before = paired_bare() if paired_bare is not None else None
        warm_job, _ = submit(api, [site_url + p for p in warmup_paths])
        wait_completed(api, warm_job["id"], timeout_s=120)
        figures["warmup_pages"] = len(warmup_paths)

        passes = [
            _measured_pass(api, stack, site_url, site_pid, urls, truth, job_timeout_s)
            for _ in range(PASSES)
        ]
        bare_after = paired_bare() if paired_bare is not None else None
        paired: list[float] = []
        if bare_before and bare_after:
            reference = (bare_before + bare_after) / 2
            figures["paired_bare_cpu_s_per_1000_pages"] = [
                round(bare_before, 3),
                round(bare_after, 3),
            ]
            paired = sorted(
                round(p["cpu_s_per_1000_pages"]["worker"] / reference, 3) for p in passes
            )
        passes.sort(key=lambda f: f["pages_per_s"])
        figures.update(passes[len(passes) // 2])
        figures["passes_pages_per_s"] = [f["pages_per_s"] for f in passes]
        figures["passes_worker_cpu_vs_paired_bare"] = paired
        if paired:  # the median of the passes' ratios
            figures["worker_cpu_vs_paired_bare"] = paired[len(paired) // 2]
        figures["sample_task_message_bytes"] = sample_message_bytes(figures["job_id"], urls[0])

        try:
            figures["firestore_probe"] = asyncio.run(firestore_probe(config.project_id))
        except Exception as exc:  # informative only; the store API may be changing under us
            figures["firestore_probe"] = {"error": f"{type(exc).__name__}: {exc}"}

        big_urls = [site_url + p for p in big_paths]
        big_job, big_accept_s = submit(api, big_urls)
        cancel = api.post(f"/v1/jobs/{big_job['id']}:cancel")
        figures["big_submission"] = {
            "urls": len(big_urls),
            "accept_s": round(big_accept_s, 2),
            "cancel_http_status": cancel.status_code,
        }
    return figures


def _measured_pass(
    api: httpx.Client,
    stack: Stack,
    site_url: str,
    site_pid: int,
    urls: list[str],
    truth: dict[str, dict[str, Any]],
    job_timeout_s: float,
) -> dict[str, Any]:
    """One measured job of ``urls``: its figures."""
    assert stack.worker is not None and stack.dispatcher is not None
    assert stack.pubsub is not None and stack.firestore is not None
    pids = {
        "worker": stack.worker.pid,
        "dispatcher": stack.dispatcher.pid,
        "pubsub_emulator": stack.pubsub.process.pid,
        "firestore_emulator": stack.firestore.process.pid,
        "catalog_site": site_pid,
    }
    site_before = httpx.get(f"{site_url}/__stats", trust_env=False).json()
    cpu_before = {name: tree_cpu_s(pid) for name, pid in pids.items()}
    bench_cpu, busy = time.process_time(), machine_busy_s()
    with RssSampler(stack.worker.pid) as rss:
        submit_wall = time.time()
        t0 = time.perf_counter()
        job, accept_s = submit(api, urls)
        final = wait_completed(api, job["id"], job_timeout_s)
        e2e_s = time.perf_counter() - t0
    cpu_after = {name: tree_cpu_s(pid) for name, pid in pids.items()}
    bench_cpu, busy = time.process_time() - bench_cpu, machine_busy_s() - busy
    site_after = httpx.get(f"{site_url}/__stats", trust_env=False).json()

    read_started = time.perf_counter()
    results = all_results(api, job["id"])
    read_s = time.perf_counter() - read_started

    n = len(urls)
    cpu = {name: cpu_after[name] - cpu_before[name] for name in pids}
    cpu["bench_process"] = bench_cpu
    ours = sum(cpu.values())
    figures: dict[str, Any] = {}
    figures.update(
        {
            "job_id": job["id"],
            "pages": n,
            "accept_s": round(accept_s, 3),
            "e2e_s": round(e2e_s, 2),
            "pages_per_s": round(n / e2e_s, 2),
            "counts": final["counts"],
            "cpu_s": {k: round(v, 2) for k, v in cpu.items()},
            "cpu_s_per_1000_pages": {k: round(v * 1000 / n, 3) for k, v in cpu.items()},
            # cores kept busy during the job: by the processes above, and machine-wide
            # (the difference is other work on the machine)
            "cores_busy_ours": round(ours / e2e_s, 2),
            "cores_busy_machine": round(busy / e2e_s, 2),
            "cpus": psutil.cpu_count(),
            "worker_rss_peak_mb": round(rss.peak / 2**20, 1),
            "worker_rss_samples": rss.samples,
            "worker_vm_hwm_mb": round((vm_hwm_bytes(stack.worker.pid) or 0) / 2**20, 1),
            "results_read_s": round(read_s, 2),
            "site_requests": site_after["requests"] - site_before["requests"],
            "site_connections": site_after["connections"] - site_before["connections"],
        }
    )
    figures.update(_result_figures(results, urls, truth, site_url, submit_wall, e2e_s))

    log_timings = worker_log_timings(stack.worker.log_path, job["id"], submit_wall)
    figures["worker_log_timings"] = {k: _summary(v) for k, v in log_timings.items()}
    figures["firestore_ops"] = firestore_ops(
        stack.worker.log_path, stack.dispatcher.log_path, job["id"], submit_wall, n
    )

    return figures


def _result_figures(
    results: list[dict[str, Any]],
    urls: list[str],
    truth: dict[str, dict[str, Any]],
    site_url: str,
    submit_wall: float,
    e2e_s: float,
) -> dict[str, Any]:
    by_url = {r["url"]: r for r in results}
    missing = [u for u in urls if u not in by_url]
    succeeded = [r for r in results if r["status"] == "succeeded"]
    mismatches = [r["url"] for r in succeeded if r["data"] != truth.get(r["url"][len(site_url) :])]
    latencies = [log_time(r["fetched_at"]) - submit_wall for r in results if r.get("fetched_at")]
    elapsed = [float(r["elapsed_ms"]) for r in results if r.get("elapsed_ms") is not None]
    n = len(urls)
    return {
        "results": len(results),
        "results_missing": len(missing),
        "succeeded": len(succeeded),
        "mismatches": len(mismatches),
        "mismatch_examples": mismatches[:3],
        "retried_tasks": sum(1 for r in results if (r.get("attempts") or 0) > 1),
        "latency_s": {
            "first": round(min(latencies), 2) if latencies else None,
            "p50": round(percentile(latencies, 50), 2),
            "p95": round(percentile(latencies, 95), 2),
            "last": round(max(latencies), 2) if latencies else None,
        },
        "fetch_elapsed_ms": _summary(elapsed),
        # With the emulator pushing at most 2 messages at a time and a saturated queue,
        # Little's law gives the mean time a push occupies one of the 2 slots.
        "derived_slot_ms_per_task_at_2": round(2 * e2e_s * 1000 / n, 1) if n else 0.0,
    }


def sample_message_bytes(job_id: str, url: str) -> int | None:
    """The data bytes a task message carries per URL, from a batch message of the default
    batch size with this job's URLs (for the Pub/Sub cost estimate)."""
    from scrapejobs_shared.delivery.batching import DEFAULT_BATCH_SIZE
    from scrapejobs_shared.domain.records import task_id_for
    from scrapejobs_shared.messaging.task_message import BatchMessage, TaskRef

    refs = tuple(
        TaskRef(id=task_id_for(job_id, str(n)), url=url) for n in range(DEFAULT_BATCH_SIZE)
    )
    message = BatchMessage(job_id=job_id, batch_id=task_id_for(job_id, "batch"), tasks=refs)
    return len(message.encode()) // DEFAULT_BATCH_SIZE


def restore_environ(saved: dict[str, str]) -> None:
    """``Stack.bootstrap`` exports the emulator hosts into ``os.environ``; undo that."""
    os.environ.clear()
    os.environ.update(saved)


@dataclasses.dataclass(frozen=True)
class PlainRuns:
    """A plain job of ``urls`` (default options), run again and again: pages/s from submission
    to the end. What another workload's pages are measured against (M, D)."""

    api: httpx.Client
    urls: list[str]
    timeout_s: float

    def one(self) -> float:
        started = time.perf_counter()
        job, _ = submit_job(self.api, self.urls, options={})
        wait_completed(self.api, job["id"], timeout_s=self.timeout_s)
        return round(len(self.urls) / (time.perf_counter() - started), 1)

    def measured(self, runs: int) -> list[float]:
        """``runs`` runs after one unmeasured: the host's slots and connections warm (a host
        idle for over a second gives its slots back)."""
        self.one()
        return [self.one() for _ in range(runs)]
