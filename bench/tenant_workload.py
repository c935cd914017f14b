"""Workload T: a fair share of one host between tenants (issue 38).

Tenant Y submits ``T_SMALL_JOBS`` one-URL jobs of the catalog's host at once, alone: each job's
submit → completed time. Then tenant X submits ``T_LARGE_PAGES`` URLs of the same host, and once
X's job runs, Y submits the same number of one-URL jobs again: their times beside X, X's
pages/s. The goal: Y's p95 beside X within ``T_GOAL_RATIO`` x its p95 alone. Default job options;
the bench's stack has no authentication (an administrator), so the jobs name their tenant with
``?tenant=`` as an admin's may.
"""

from __future__ import annotations

import concurrent.futures
import time
from typing import Any

import httpx

from bench.bare_loop import latency_summary
from bench.catalog_site import FIELDS

T_SMALL_JOBS = 50
T_LARGE_PAGES = 5000
T_GOAL_RATIO = 3.0
T_PAGES = 2 * T_SMALL_JOBS + T_LARGE_PAGES  # the catalog pages T reads
T_POLL_S = 0.1  # 50 pollers: every 10 ms they were most of the dispatcher's load
LARGE = "tenant-x"
SMALL = "tenant-y"


def small_jobs(api_url: str, urls: list[str], timeout_s: float) -> list[float]:
    """Submit one one-URL job per URL, all at once (one thread each), each polled until it
    ends; each job's submit → completed seconds."""

    from bench.stack_run import one_url_job

    def one(url: str) -> float:
        with httpx.Client(base_url=api_url, timeout=30, trust_env=False) as api:
            return one_url_job(api, url, T_POLL_S, timeout_s, params={"tenant": SMALL})

    with concurrent.futures.ThreadPoolExecutor(len(urls)) as pool:
        return list(pool.map(one, urls))


def run_tenant_workload(
    api: httpx.Client, api_url: str, small: list[str], large: list[str], timeout_s: float
) -> dict[str, Any]:
    """T, as the module says: ``small`` holds two sets of Y's URLs (alone, beside X)."""
    from bench.stack_run import wait_completed

    half = len(small) // 2
    alone = small_jobs(api_url, small[:half], timeout_s)
    body = {"urls": large, "extract": FIELDS}
    started = time.perf_counter()
    response = api.post("/v1/jobs", params={"tenant": LARGE}, json=body)
    response.raise_for_status()
    large_id = response.json()["id"]
    while api.get(f"/v1/jobs/{large_id}").json()["counts"].get("succeeded", 0) < 200:
        time.sleep(0.05)  # X holds the host
    beside = small_jobs(api_url, small[half:], timeout_s)
    wait_completed(api, large_id, timeout_s)
    wall = time.perf_counter() - started
    alone_p, beside_p = latency_summary(alone), latency_summary(beside)
    figure: dict[str, Any] = {
        "small_alone": alone_p,
        "small_beside_large": beside_p,
        "large_pages_per_s": round(len(large) / wall, 1),
        "large_wall_s": round(wall, 2),
    }
    ratio = beside_p["p95_ms"] / max(alone_p["p95_ms"], 1e-9)
    figure["p95_ratio"] = round(ratio, 2)
    figure["goal"] = f"p95 beside X within {T_GOAL_RATIO:g}x alone"
    return figure
