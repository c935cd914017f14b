"""Bodies in the shapes of the monitoring endpoints (GET /v1/stats, /v1/stats/history) and of
a job, for client and CLI tests on httpx.MockTransport."""

from __future__ import annotations

from typing import Any

STATS: dict[str, Any] = {
    "window": "1h",
    "since": "2026-01-01T05:00:00Z",
    "generated_at": "2026-01-01T06:00:00Z",
    "partial": False,
    "tasks": {
        "queued": 3,
        "running": 2,
        "processing": 0,
        "succeeded": 90,
        "failed": 4,
        "dead_lettered": 1,
        "cancelled": 0,
        "unusable": {"challenge": 2, "login_wall": 0, "empty_content": 1},
    },
    "jobs": {"running": 1, "completed": 7},
    "throughput_per_s": 12.5,
    "processing": {"avg_ms": 40.0, "p50_ms": 31.0, "p95_ms": None},
    "fetch": {"p95_ms": 120.0},
    "error_rate": 0.05,
    "oldest_queued_age_s": None,
    "paused_hosts": [
        {"host": "https~shop.test~443", "until": "2026-01-01T00:01:00Z", "reason": "breaker"}
    ],
    "ai": {"calls": 12, "cached": 3, "input_tokens": 40210, "output_tokens": 1502, "cost": 0.0421},
    "proxied_pages": {"basic": 40, "stealth": 2},
    "proxies": [{"proxy": "socks5://10.0.0.7:1080", "served": 42, "failed": 1}],
}
HISTORY: dict[str, Any] = {
    "history": [
        {
            "hour": "2026-01-01T00:00:00Z",
            "processed": 100,
            "succeeded": 95,
            "failed": 4,
            "dead_lettered": 1,
            "success_rate": 0.95,
            "avg_ms": 40.0,
            "p95_ms": 90.0,
            "throughput_per_s": 0.03,
        }
    ]
}
JOB: dict[str, Any] = {
    "id": "j1",
    "status": "queued",
    "created_at": "2026-01-01T00:00:00Z",
    "updated_at": "2026-01-01T00:00:00Z",
    "total": 1,
    "counts": {"queued": 1},
}
