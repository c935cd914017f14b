"""Estimated production cost per million pages, at Google Cloud list prices (USD).

From the full stack's measured figures: the worker's and the dispatcher's CPU per page (Cloud
Run vCPU-seconds; GiB-seconds follow from the instance time), Firestore documents read / written
per page (the services' log fields), Pub/Sub messages per page and their size. Free tiers are
ignored (a million pages a month is past them). The prices, their sources and what was not found
are in :data:`PRICES` and bench/README.md; a price that was not found is ``None`` and its line
says so instead of guessing.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass
from typing import Any

PRICES_LOOKED_UP = "2026-11-22"
RUN_PRICING = "https://cloud.google.com/run/pricing"
FIRESTORE_PRICING = "https://cloud.google.com/firestore/pricing"
PUBSUB_PRICING = "https://cloud.google.com/pubsub/pricing"

OFFICIAL = "official pricing page"
THIRD_PARTY = "third-party pages; cut off in the stored copy of the official page, not confirmed"


@dataclass(frozen=True)
class Price:
    usd: float | None  # None: not found
    unit: str
    source: str
    status: str


PRICES: dict[str, Price] = {
    # Cloud Run, Tier 1 regions (us-central1, the deploy default)
    "run_cpu_instance": Price(0.000018, "vCPU-second", RUN_PRICING, OFFICIAL),
    "run_cpu_request": Price(0.000024, "vCPU-second", RUN_PRICING, OFFICIAL),
    "run_memory_request": Price(0.0000025, "GiB-second", RUN_PRICING, THIRD_PARTY),
    "run_memory_instance": Price(None, "GiB-second", RUN_PRICING, "not found"),
    "run_requests": Price(0.40 / 1e6, "request", RUN_PRICING, THIRD_PARTY),
    # Firestore (Standard edition). The official page's per-location table is not in its stored
    # copy; these are the multi-region figures of the official page's text as it was quoted
    # (2018 copies). A regional database (us-central1, the deploy default) is cheaper: third
    # parties give $0.03 / $0.09 per 100,000 reads / writes there (deletes: not found).
    "firestore_read": Price(0.06 / 1e5, "document read", FIRESTORE_PRICING, OFFICIAL + " (2018)"),
    "firestore_write": Price(0.18 / 1e5, "document write", FIRESTORE_PRICING, OFFICIAL + " (2018)"),
    "firestore_delete": Price(
        0.02 / 1e5, "document delete", FIRESTORE_PRICING, OFFICIAL + " (2018)"
    ),
    "firestore_read_regional": Price(0.03 / 1e5, "document read", FIRESTORE_PRICING, THIRD_PARTY),
    "firestore_write_regional": Price(0.09 / 1e5, "document write", FIRESTORE_PRICING, THIRD_PARTY),
    # Pub/Sub: throughput (publish + delivery), at least 1,000 bytes per publish/push request;
    # a message's size = data + attributes + 20 bytes (timestamp) + its message_id
    "pubsub_byte": Price(40 / 2**40, "byte (publish or delivery)", PUBSUB_PRICING, OFFICIAL),
}

# Assumptions (bench/README.md explains them)
WORKER_VCPU = 1.0  # terraform worker_cpu default
WORKER_MEMORY_GIB = 1.0  # terraform worker_memory default (1Gi)
DISPATCHER_VCPU = 1.0  # terraform dispatcher_cpu default
DISPATCHER_MEMORY_GIB = 0.5  # terraform dispatcher_memory default (512Mi)
UTILIZATIONS = (1.0, 0.6)  # instances' vCPU busy while billed: 1.0 is the floor of the cost
PUBSUB_MIN_REQUEST_BYTES = 1000
ATTRIBUTE_BYTES = 80  # "format" + W3C "traceparent" (+ key names) on every message
MESSAGE_OVERHEAD_BYTES = 20 + 20  # timestamp + a message_id of ~20 characters
TTL_DELETES_PER_PAGE = 1.0  # each page's task document expires through a TTL policy


def _usd(amount: float | None, price: Price) -> float | None:
    return None if amount is None or price.usd is None else amount * price.usd * 1e6


def _round(value: float | None) -> float | None:
    return None if value is None else round(value, 2)


def estimate(stack: dict[str, Any], celery: dict[str, Any] | None) -> dict[str, Any]:
    """USD per million pages, by line, from the stack's figures (and Celery's for comparison)."""
    cpu = stack["cpu_s_per_1000_pages"]
    worker_cpu = cpu["worker"] / 1000  # CPU-s per page
    dispatcher_cpu = cpu.get("dispatcher", 0.0) / 1000
    ops = stack.get("firestore_ops") or {}
    per_page = ops.get("per_page") or {}
    messages_per_page = (
        1 / ops["pages_per_message"] if ops.get("pages_per_message") else 1.0
    )  # one push request per message
    lines: list[dict[str, Any]] = []

    for utilization in UTILIZATIONS:
        # instance time per page (s): the CPU it needs at that utilization of its vCPUs
        worker_s = worker_cpu / (WORKER_VCPU * utilization)
        dispatcher_s = dispatcher_cpu / (DISPATCHER_VCPU * utilization)
        vcpu_s = worker_s * WORKER_VCPU + dispatcher_s * DISPATCHER_VCPU
        gib_s = worker_s * WORKER_MEMORY_GIB + dispatcher_s * DISPATCHER_MEMORY_GIB
        for billing, cpu_price, memory_price, requests in (
            ("instance-based", "run_cpu_instance", "run_memory_instance", 0.0),
            ("request-based", "run_cpu_request", "run_memory_request", messages_per_page),
        ):
            parts = {
                "cpu": _usd(vcpu_s, PRICES[cpu_price]),
                "memory": _usd(gib_s, PRICES[memory_price]),
                "requests": _usd(requests, PRICES["run_requests"]) if requests else 0.0,
            }
            known = [v for v in parts.values() if v is not None]
            lines.append(
                {
                    "item": f"Cloud Run, {billing} billing, {utilization:.0%} vCPU use",
                    "usd": _round(sum(known)),
                    "parts_usd": {k: _round(v) for k, v in parts.items()},
                    "missing": [f"{k} (no price found)" for k, v in parts.items() if v is None],
                    "basis": f"{vcpu_s:.5f} vCPU-s, {gib_s:.5f} GiB-s, "
                    f"{requests:.3f} requests per page",
                }
            )

    deletes = per_page.get("deletes")
    delete_basis = "measured"
    if deletes is None:
        deletes, delete_basis = TTL_DELETES_PER_PAGE, "assumed: TTL deletes of the task documents"
    reads, writes = per_page.get("reads"), per_page.get("writes")
    if reads is not None and writes is not None:
        firestore = {
            "reads": _usd(reads, PRICES["firestore_read"]),
            "writes": _usd(writes, PRICES["firestore_write"]),
            "deletes": _usd(deletes, PRICES["firestore_delete"]),
        }
        lines.append(
            {
                "item": "Firestore, multi-region prices",
                "usd": _round(sum(v for v in firestore.values() if v is not None)),
                "parts_usd": {k: _round(v) for k, v in firestore.items()},
                "missing": [],
                "basis": f"{reads:.3f} reads, {writes:.3f} writes (measured), "
                f"{deletes:.3f} deletes ({delete_basis}) per page",
            }
        )
        regional = {
            "reads": _usd(reads, PRICES["firestore_read_regional"]),
            "writes": _usd(writes, PRICES["firestore_write_regional"]),
        }
        lines.append(
            {
                "item": "Firestore, regional prices (reads + writes; deletes: no price found)",
                "usd": _round(sum(v for v in regional.values() if v is not None)),
                "parts_usd": {k: _round(v) for k, v in regional.items()},
                "missing": ["deletes (no price found)"],
                "basis": "the same operations, us-central1 prices from third parties",
                "alternative": True,
            }
        )
    else:
        lines.append(
            {
                "item": "Firestore",
                "usd": None,
                "parts_usd": {},
                "missing": ["reads, writes (not in the logs)"],
                "basis": "n/a: the services' logs have no firestore_reads / firestore_writes",
            }
        )

    lines.append(pubsub_line(stack, ops, messages_per_page))
    if celery:
        lines.extend(celery_lines(celery))
    main = [line for line in lines if _in_total(line)]
    total = sum(line["usd"] for line in main if line["usd"] is not None)
    return {
        "prices_looked_up": PRICES_LOOKED_UP,
        "prices": {name: asdict(price) for name, price in PRICES.items()},
        "assumptions": {
            "worker": f"{WORKER_VCPU:g} vCPU, {WORKER_MEMORY_GIB:g} GiB",
            "dispatcher": f"{DISPATCHER_VCPU:g} vCPU, {DISPATCHER_MEMORY_GIB:g} GiB",
            "free_tiers": "ignored",
            "ttl_deletes_per_page_if_not_logged": TTL_DELETES_PER_PAGE,
        },
        "lines": lines,
        "total_usd": round(total, 2),
        "total_is": "Cloud Run instance-based at 100% vCPU use (memory: no price found) + "
        "Firestore multi-region + Pub/Sub; lines without a price are left out",
        "complete": all(not line["missing"] for line in main),
        "total_missing": [
            f"{line['item']}: {', '.join(line['missing'])}" for line in main if line["missing"]
        ],
    }


def _in_total(line: dict[str, Any]) -> bool:
    item: str = line["item"]
    if line.get("alternative") or item.startswith("Celery"):
        return False
    return not item.startswith("Cloud Run") or item.endswith(
        "instance-based billing, 100% vCPU use"
    )


def pubsub_line(
    stack: dict[str, Any], ops: dict[str, Any], messages_per_page: float
) -> dict[str, Any]:
    """Publish + push bytes per page: each push is one request (at least 1,000 bytes); publish
    requests carry up to 500 messages, so they pass 1,000 bytes and are billed as sent."""
    pages_per_message = 1 / messages_per_page
    logged = (ops.get("message_bytes") or {}).get("mean")
    if logged:
        size, basis = float(logged), "message size from the worker's log"
    else:
        sample = stack.get("sample_task_message_bytes")
        if sample is None:
            return {
                "item": "Pub/Sub",
                "usd": None,
                "parts_usd": {},
                "missing": ["message size (not measured)"],
                "basis": "n/a: no message size",
            }
        # data: as many of today's one-URL task payloads as the message carries
        size = pages_per_message * sample + ATTRIBUTE_BYTES + MESSAGE_OVERHEAD_BYTES
        basis = (
            f"assumed {pages_per_message:.2f} x {sample} B of task data per message + attributes"
        )
    publish = size * messages_per_page
    push = max(size, PUBSUB_MIN_REQUEST_BYTES) * messages_per_page
    return {
        "item": "Pub/Sub",
        "usd": _round(_usd(publish + push, PRICES["pubsub_byte"])),
        "parts_usd": {
            "publish": _round(_usd(publish, PRICES["pubsub_byte"])),
            "push": _round(_usd(push, PRICES["pubsub_byte"])),
        },
        "missing": [],
        "basis": f"{size:.0f} B per message ({basis}), {pages_per_message:.2f} pages per message",
    }


def celery_lines(celery: dict[str, Any]) -> list[dict[str, Any]]:
    """Celery + Redis for comparison only: their measured CPU at Cloud Run's instance-based
    vCPU-second price. No memory, VM or managed-Redis price: not a bill, a CPU comparison."""
    split = celery["cpu_s_per_1000_pages_split"]
    cpu_s = (split["worker"] + split["redis"]) / 1000
    lines: list[dict[str, Any]] = []
    for utilization in UTILIZATIONS:
        vcpu_s = cpu_s / utilization
        lines.append(
            {
                "item": f"Celery + Redis CPU at the same vCPU-s price, {utilization:.0%} use",
                "usd": _round(_usd(vcpu_s, PRICES["run_cpu_instance"])),
                "parts_usd": {},
                "missing": ["memory, VM, managed Redis (not estimated)"],
                "basis": f"{vcpu_s:.5f} vCPU-s per page (worker tree + redis-server); "
                "comparison only",
            }
        )
    return lines
