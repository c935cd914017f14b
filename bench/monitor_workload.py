"""Workload K: a monitor's check of ``K_PAGES`` unchanged pages against a plain job of the same
pages (issue 40).

A monitor of the pages (the bench's extraction, default options) runs one check unmeasured
(every page ``new``: the snapshots and the pages' ETags kept). Then, ``rounds`` times (at least
``K_ROUNDS``), alternately: a plain job of the same URLs and extraction (what a user runs on
a schedule without a monitor), from its submission to its ``finished_at``; and a check of the
monitor, from ``:run`` to the check's ``finished_at`` (its pages compared, polled every
``K_POLL_S``), every page answered ``304`` by the catalog. Best of each. Firestore operations
per page from the services' logs: the job's (worker batches, submission) and, for the check,
its own reads of the pages' validators and its comparison.

Goals: the check's pages/s ≥ ``K_GOAL_RATIO`` x the plain job's, and ≤ ``K_GOAL_WRITES``
Firestore writes per unchanged page.
"""

from __future__ import annotations

import time
import uuid
from collections.abc import Callable
from datetime import datetime
from pathlib import Path
from typing import Any

import httpx

from bench.catalog_site import FIELDS

K_PAGES = 1000
K_ROUNDS = 2
K_POLL_S = 0.2
K_GOAL_RATIO = 1.5
K_GOAL_WRITES = 0.5
CHECK_LINES = ("check validators read", "check finished")  # the check's own operations
FINISHED = ("completed", "partial", "failed", "skipped_overlap")


def run_monitor_workload(
    api: httpx.Client,
    site_url: str,
    urls: list[str],
    logs: tuple[Path, Path],
    rounds: int,
    timeout_s: float,
    forget: Callable[[], None] = lambda: None,
) -> dict[str, Any]:
    """K, as the module says; ``logs``: the worker's and the dispatcher's; ``forget`` runs
    before each measured run: the results of the runs before it deleted (a check lists its
    job's; bench/fresh_results.py)."""
    from bench.stack_run import firestore_ops, submit_job, wait_completed

    body = {
        "urls": urls,
        "extract": FIELDS,
        "name": f"bench {uuid.uuid4().hex[:8]}",
        "schedule": {"text": "daily"},
    }
    made = api.post("/v1/monitors", json=body)
    made.raise_for_status()
    monitor_id = made.json()["id"]
    first = _check(api, monitor_id, timeout_s)
    if first["summary"].get("new") != len(urls):
        raise RuntimeError(f"the first check did not find every page new: {first}")

    def plain() -> dict[str, Any]:
        forget()
        since = time.time()
        job, _ = submit_job(api, urls, options={})
        done = wait_completed(api, job["id"], timeout_s)
        ops = firestore_ops(*logs, job["id"], since, len(urls))["per_page"]
        return {"pages_per_s": _per_s(len(urls), since, done["finished_at"]), "ops": ops}

    def check() -> dict[str, Any]:
        forget()
        since = time.time()
        before = _not_modified(site_url)
        done = _check(api, monitor_id, timeout_s)
        if done["summary"].get("same") != len(urls):
            raise RuntimeError(f"a check of unchanged pages found changes: {done}")
        ops = firestore_ops(*logs, done["job_id"], since, len(urls))["per_page"]
        own = _check_ops(logs[1], done["job_id"])
        per_page = {
            op: None if ops.get(op) is None else round(ops[op] + own[op] / len(urls), 4)
            for op in ("reads", "writes")
        }
        return {
            "pages_per_s": _per_s(len(urls), since, done["finished_at"]),
            "ops": per_page,
            "answered_304": _not_modified(site_url) - before,
        }

    runs: dict[str, list[dict[str, Any]]] = {"plain": [], "check": []}
    for _ in range(max(rounds, K_ROUNDS)):
        runs["plain"].append(plain())
        runs["check"].append(check())
    best = {name: max(found, key=lambda run: run["pages_per_s"]) for name, found in runs.items()}
    figures = {
        "pages": len(urls),
        "plain_pages_per_s": best["plain"]["pages_per_s"],
        "check_pages_per_s": best["check"]["pages_per_s"],
        "ratio": round(best["check"]["pages_per_s"] / best["plain"]["pages_per_s"], 3),
        "plain_firestore_per_page": best["plain"]["ops"],
        "check_firestore_per_page": best["check"]["ops"],
        "answered_304": best["check"]["answered_304"],
        "runs": runs,
    }
    print(f"scrapejobs K: {figures}", flush=True)
    return figures


def _check(api: httpx.Client, monitor_id: str, timeout_s: float) -> dict[str, Any]:
    """Run a check of the monitor to its end."""
    started = api.post(f"/v1/monitors/{monitor_id}:run")
    started.raise_for_status()
    path = f"/v1/monitors/{monitor_id}/checks/{started.json()['id']}"
    deadline = time.monotonic() + timeout_s
    while True:
        check: dict[str, Any] = api.get(path).json()
        if check["status"] in FINISHED:
            if check["status"] != "completed":
                raise RuntimeError(f"check ended {check['status']}: {check}")
            return check
        if time.monotonic() > deadline:
            raise TimeoutError(f"check not finished after {timeout_s:.0f} s: {check}")
        time.sleep(K_POLL_S)


def _check_ops(dispatcher_log: Path, job_id: str) -> dict[str, int]:
    """The check's own Firestore operations (its validators read, its comparison)."""
    from bench.stack_run import log_entries

    totals = {"reads": 0, "writes": 0}
    for entry in log_entries(dispatcher_log):
        if entry.get("message") in CHECK_LINES and entry.get("job_id") == job_id:
            for op in totals:
                totals[op] += int(entry.get(f"firestore_{op}") or 0)
    return totals


def _not_modified(site_url: str) -> int:
    stats = httpx.get(f"{site_url}/__stats", timeout=10, trust_env=False).json()
    return int(stats.get("not_modified") or 0)


def _per_s(pages: int, since: float, finished_at: str) -> float:
    return round(pages / (datetime.fromisoformat(finished_at).timestamp() - since), 1)
