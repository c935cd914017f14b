"""Issue 51's pattern goal: twenty submissions of the costliest patterns the API accepts, in
parallel, against a real dispatcher process (uvicorn, in-memory stores: what is measured is the
dispatcher's own loop and memory, not Firestore): ``/healthz`` latency throughout (p50, p99,
max) and the process's resident memory against idle.

    uv run python -m bench.pattern_load            # prints the figures as JSON

Each submission holds ``PATTERNS`` extraction fields whose ``re`` is the costliest pattern the
512 KiB budget still accepts (``[\\p{L}\\p{N}]{24}``: ~20 ms of CPU to compile), each a little
different so nothing is compiled twice.
"""

from __future__ import annotations

import asyncio
import json
import os
import statistics
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import httpx

from scrapejobs_devstack.processes import free_port

SUBMISSIONS = 20
PATTERNS = 64  # the most a job holds by default (SCRAPEJOBS_MAX_PATTERNS_PER_JOB)
COSTLIEST = r"[\p{L}\p{N}]{24}"


def serve(port: int) -> None:
    """The dispatcher over in-memory adapters, served by uvicorn (the child process)."""
    import uvicorn

    from scrapejobs_dispatcher.main import create_app
    from scrapejobs_dispatcher.settings import DispatcherSettings
    from scrapejobs_shared.adapters.memory import (
        api_keys,
        held_batches,
        host_gate,
        idempotency,
        job_store,
        monitor_checks,
        monitor_store,
        publisher,
        quota_ledger,
        session_revocations,
        tenant_quotas,
        webhooks,
    )

    store = job_store.MemoryJobStore()
    checks = monitor_checks.MemoryMonitorChecks()
    app = create_app(
        DispatcherSettings(auth_mode="none", coalesce_window_ms=0),
        {
            "store": store,
            "held_batches": held_batches.MemoryHeldBatches(store),
            "publisher": publisher.MemoryTaskPublisher(),
            "gate": host_gate.MemoryHostGate(),
            "idempotency_keys": idempotency.MemoryIdempotencyKeys(),
            "stats_reader": store,
            "webhook_outbox": webhooks.MemoryWebhookOutbox(),
            "webhook_log": webhooks.MemoryWebhookLog(),
            "worker_directory": store,
            "session_revocations": session_revocations.MemorySessionRevocations(),
            "api_keys": api_keys.MemoryApiKeyStore(),
            "tenant_quotas": tenant_quotas.MemoryTenantQuotas(),
            "quota_ledger": quota_ledger.MemoryQuotaLedger(),
            "monitor_store": monitor_store.MemoryMonitorStore(checks),
            "monitor_checks": checks,
        },
    )
    uvicorn.run(app, host="127.0.0.1", port=port, log_level="warning")


def rss_mb(pid: int) -> float:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) / 1024
    return 0.0


def body(n: int) -> dict[str, Any]:
    fields = {
        f"f{k}": {"css": "p", "re": COSTLIEST + "x" * (n % 7) + f"y{k}"} for k in range(PATTERNS)
    }
    return {"url": f"http://127.0.0.1:9/{n}", "extract": fields}


async def measure(url: str, pid: int) -> dict[str, Any]:
    async with httpx.AsyncClient(base_url=url, timeout=120) as client:
        await client.post("/v1/jobs", json={"url": "http://127.0.0.1:9/warm"})
        idle = rss_mb(pid)
        latencies: list[float] = []
        peak = idle
        done = asyncio.Event()

        async def poll() -> None:
            nonlocal peak
            async with httpx.AsyncClient(base_url=url, timeout=30) as probe:
                while not done.is_set():
                    started = time.perf_counter()
                    await probe.get("/healthz")
                    latencies.append(time.perf_counter() - started)
                    peak = max(peak, rss_mb(pid))
                    await asyncio.sleep(0.01)

        poller = asyncio.create_task(poll())
        started = time.perf_counter()
        answers = await asyncio.gather(
            *(client.post("/v1/jobs", json=body(n)) for n in range(SUBMISSIONS))
        )
        elapsed = time.perf_counter() - started
        done.set()
        await poller
    ordered = sorted(latencies)
    return {
        "submissions": SUBMISSIONS,
        "patterns_each": PATTERNS,
        "pattern": COSTLIEST,
        "accepted": sum(a.status_code == 202 for a in answers),
        "submit_all_s": round(elapsed, 2),
        "healthz_samples": len(ordered),
        "healthz_p50_ms": round(statistics.median(ordered) * 1000, 1),
        "healthz_p99_ms": round(ordered[int(len(ordered) * 0.99) - 1] * 1000, 1),
        "healthz_max_ms": round(ordered[-1] * 1000, 1),
        "rss_idle_mb": round(idle, 1),
        "rss_peak_mb": round(peak, 1),
        "rss_over_idle_mb": round(peak - idle, 1),
    }


def main() -> int:
    if len(sys.argv) == 3 and sys.argv[1] == "serve":
        serve(int(sys.argv[2]))
        return 0
    port = free_port()
    child = subprocess.Popen(
        [sys.executable, "-m", "bench.pattern_load", "serve", str(port)],
        env=os.environ | {"PYTHONUNBUFFERED": "1"},
    )
    url = f"http://127.0.0.1:{port}"
    try:
        for _ in range(300):
            try:
                if httpx.get(f"{url}/healthz", timeout=1).status_code == 200:
                    break
            except httpx.HTTPError:
                time.sleep(0.1)
        print(json.dumps(asyncio.run(measure(url, child.pid)), indent=2))
    finally:
        child.terminate()
        child.wait(timeout=10)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
