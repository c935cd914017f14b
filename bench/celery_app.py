"""The Celery app of the Celery + Redis baseline (bench/celery_baseline.py).

The worker runs it as ``python -m celery -A bench.celery_app worker``, with the Redis URL in
``BENCH_CELERY_REDIS_URL`` (a loopback address: the benchmark starts its own redis-server). The
benchmark process makes its own client app with :func:`make_app` and enqueues by task name.

Configured as the seeds' Celery deployments: late acks, prefetch 1, reject on worker loss, JSON,
Redis as broker and result backend. One task per URL: fetch the page with ``requests`` (a sync
client, as Celery users would; one keep-alive session per pool process) and extract the same
fields as the bare loop (:func:`bench.bare_loop.extract_bare`); the dict is the task's result,
stored in Redis.
"""

from __future__ import annotations

import os
from typing import Any

import requests
from celery import Celery

from bench.bare_loop import extract_bare

TASK_NAME = "bench.scrape"
REDIS_URL_ENV = "BENCH_CELERY_REDIS_URL"
FETCH_TIMEOUT_S = 30.0

SETTINGS: dict[str, Any] = {
    "task_acks_late": True,
    "worker_prefetch_multiplier": 1,
    "task_reject_on_worker_lost": True,
    "task_serializer": "json",
    "result_serializer": "json",
    "accept_content": ["json"],
    "broker_connection_retry_on_startup": True,
    "result_expires": 3600,
}


def make_app(redis_url: str) -> Celery:
    """A Celery app using the Redis at ``redis_url`` as broker and result backend."""
    app = Celery("bench", broker=redis_url, backend=redis_url)
    app.conf.update(SETTINGS)
    return app


app = make_app(os.environ.get(REDIS_URL_ENV, "redis://127.0.0.1:6379/0"))

_session: requests.Session | None = None


def _http() -> requests.Session:
    """One pooled keep-alive session per pool process (made after the fork, on first use)."""
    global _session
    if _session is None:
        _session = requests.Session()
        _session.trust_env = False  # no proxy: the site is on loopback
    return _session


@app.task(name=TASK_NAME)  # type: ignore[untyped-decorator]
def scrape(url: str) -> dict[str, Any]:
    response = _http().get(url, timeout=FETCH_TIMEOUT_S)
    response.raise_for_status()
    return extract_bare(response.text)
