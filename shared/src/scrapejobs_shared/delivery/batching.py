"""Cutting a job's tasks into batches: up to B tasks of one job per message, grouped by host so
a batch mostly runs on one host's warm slot."""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence
from dataclasses import replace
from datetime import datetime
from urllib.parse import urlsplit

from scrapejobs_shared.delivery.url_lanes import lane_for
from scrapejobs_shared.domain.records import BatchItem, BatchRecord, task_id_for
from scrapejobs_shared.domain.tenancy import DEFAULT_TENANT

DEFAULT_BATCH_SIZE = 100  # chosen from measurements: bench/README.md ("Batch size")
HOST_WINDOW = 2  # a job's batches of one host in the broker at once (bench/README.md, T)
# A job's batch size when it holds batches: the same by default; 50 shortens another tenant's
# wait on the job's host (T) for more claims and commits per page (bench/README.md, session 14)
HELD_BATCH_SIZE = DEFAULT_BATCH_SIZE
# A job's batches often run all at once, each claiming, settling and ending on its shard. A job
# of 10,000 URLs has 100 batches (100 shards) at the default size; a crawl is counted for the
# pages it may find, so one of 256 pages or more takes the cap (docs/scale.md, "counter
# shards"). A status read reads every shard: 257 documents at the cap ($0.00015 at list price).
MAX_COUNTER_SHARDS = 256
# A shard a batch: a running batch commits about once a second while it has results to record,
# so two batches running at once on one shard take it to two writes a second (``make scale``:
# a monitor's check of 1,000 pages is two batches of 500, which had one shard, at 1.3 writes a
# second over 10 s; at four batches a shard, as before, and at two, the same)
BATCHES_PER_SHARD = 1


def shards_for(batches: int, crawl_pages: int = 0) -> int:
    """Counter shards for a job of this many batches: each shard takes the commits of
    ``BATCHES_PER_SHARD`` batches (one), at most ``MAX_COUNTER_SHARDS`` (a status read costs
    one document read per shard). A crawl starts
    with one batch and finds the rest, each page's new links a batch of their own: its shards
    are counted for up to ``crawl_pages`` batches (``make scale``: a crawl of 500 pages on one
    shard refused 13,546 commits there and did not finish)."""
    expected = max(batches, crawl_pages)
    return max(1, min(MAX_COUNTER_SHARDS, -(-expected // BATCHES_PER_SHARD)))


def size_for(items: Sequence[BatchItem], size: int, window: int, held_size: int) -> int:
    """A job's batch size: ``size``, or ``held_size`` when some host of the job has more URLs
    than ``window`` batches of ``size`` take (so that its later batches wait held): another
    tenant's work on that host then waits behind shorter batches, for a few more claims and
    commits per page of the held job."""
    if window <= 0 or held_size >= size:
        return size
    per_host = Counter(authority(item.url) for item in items)
    return held_size if max(per_host.values(), default=0) > window * size else size


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
    host), each in the lane its URLs take (url_lanes.py: a job's documents apart from its
    pages; the job's ``lane`` first). Batch ids derive from ``job_id``, ``key`` and the batch's
    number, so planning the same tasks again gives the same ids (a redelivered crawl page
    re-plans its children)."""
    if size < 1:
        raise ValueError("batch size must be at least 1")
    by_lane: dict[str, list[BatchItem]] = {lane: []}
    for item in items:
        by_lane.setdefault(lane_for(item.url, lane), []).append(item)
    planned: list[BatchRecord] = []
    for batch_lane, in_lane in by_lane.items():
        ordered = sorted(in_lane, key=lambda item: (authority(item.url), item.index))
        for start in range(0, len(ordered), size):
            planned.append(
                BatchRecord(
                    job_id=job_id,
                    id=task_id_for(job_id, f"batch:{key}:{len(planned)}"),
                    items=tuple(ordered[start : start + size]),
                    created_at=created_at,
                    expire_at=expire_at,
                    lane=batch_lane,
                    tenant=tenant,
                )
            )
    return planned


def batch_group(batch: BatchRecord) -> str:
    """The host a batch is held and released by: its first task's (a job's batches keep
    hosts together, so a one-host job's batches share it)."""
    return authority(batch.items[0].url) if batch.items else ""


def hold_beyond(batches: Sequence[BatchRecord], window: int) -> list[BatchRecord]:
    """The batches, those beyond the first ``window`` of their host held (0: none held).
    A held batch is published when one of its host's batches of the job finishes its fetches
    (the worker releases it), so a job has at most ``window`` batches of one host in the
    broker: another tenant's work on that host waits behind a few batches, not the whole job.
    A job over many hosts holds nothing (each host's first batches go at once)."""
    if window <= 0:
        return list(batches)
    sizes: dict[str, int] = {}
    for batch in batches:
        sizes[batch_group(batch)] = sizes.get(batch_group(batch), 0) + 1
    seen: dict[str, int] = {}
    planned = []
    for batch in batches:
        group = batch_group(batch)
        seen[group] = seen.get(group, 0) + 1
        if sizes[group] > window:  # finishing any of them releases the next
            batch = replace(batch, held=seen[group] > window, chained=True)
        planned.append(batch)
    return planned


def authority(url: str) -> str:
    """The URL's authority, lower-cased: enough to keep a host's URLs together (the URLs were
    validated at submission; a full host key costs 30x more for 10,000 URLs)."""
    return urlsplit(url).netloc.lower()
