"""Cutting a job's tasks into batches: up to B tasks of one job per message, grouped by host so
a batch mostly runs on one host's warm slot."""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime
from urllib.parse import urlsplit

from scrapejobs_shared.domain.records import BatchItem, BatchRecord, task_id_for
from scrapejobs_shared.domain.tenancy import DEFAULT_TENANT

DEFAULT_BATCH_SIZE = 100  # chosen from measurements: bench/README.md ("Batch size")
MAX_COUNTER_SHARDS = 64
BATCHES_PER_SHARD = 4


def shards_for(batches: int) -> int:
    """Counter shards for a job of this many batches: each shard takes the commits of a few
    batches (a batch commits about twice: its claim and its results), at most
    ``MAX_COUNTER_SHARDS`` (a status read costs one document read per shard)."""
    return max(1, min(MAX_COUNTER_SHARDS, -(-batches // BATCHES_PER_SHARD)))


def plan_batches(
    job_id: str,
    items: Sequence[BatchItem],
    size: int,
    created_at: datetime,
    expire_at: datetime,
    key: str = "s",
    lane: str = "normal",
    tenant: str = DEFAULT_TENANT,
) -> list[BatchRecord]:
    """Batches of at most ``size`` items, hosts kept together (submission order within a
    host). Batch ids derive from ``job_id``, ``key`` and the batch's number, so planning the
    same tasks again gives the same ids (a redelivered crawl page re-plans its children)."""
    if size < 1:
        raise ValueError("batch size must be at least 1")
    ordered = sorted(items, key=lambda item: (authority(item.url), item.index))
    return [
        BatchRecord(
            job_id=job_id,
            id=task_id_for(job_id, f"batch:{key}:{n}"),
            items=tuple(ordered[start : start + size]),
            created_at=created_at,
            expire_at=expire_at,
            lane=lane,
            tenant=tenant,
        )
        for n, start in enumerate(range(0, len(ordered), size))
    ]


def authority(url: str) -> str:
    """The URL's authority, lower-cased: enough to keep a host's URLs together (the URLs were
    validated at submission; a full host key costs 30x more for 10,000 URLs)."""
    return urlsplit(url).netloc.lower()
