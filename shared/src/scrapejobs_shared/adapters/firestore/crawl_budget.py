"""A crawl's budget of new pages (``max_new``) on shards: ``jobs/{id}/crawl/budget`` and
``budget-{k}`` for k from 1, one per counter shard of the job, each allowing its part of the
budget and counting what it gave (``added``).

Every batch a crawl discovers takes pages from the budget: it reads the shards, then writes
their new counts in the batch's commit, each guarded by the update time it read (a shard that
changed meanwhile is read again: store_base.guarded_rounds). On one document those commits
queued behind each other (as transactions then): ``make scale``'s crawl of 1,000 pages
from 200 instances had the budget document refuse 49,404 commits and the crawl stall. A batch
now takes from the shard its id falls on, and from the next ones only when that shard has too
little left: the budget's end is the only time a batch reads more than one shard, and a crawl
still finds exactly ``max_new`` pages when the site has them. A crawl made before the shards
(one counter shard) keeps its one document."""

from __future__ import annotations

import zlib
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from scrapejobs_shared.observability.store_ops import count

COLLECTION = "crawl"


@dataclass(frozen=True, slots=True)
class Taken:
    shard: int
    ref: Any
    added: int  # the shard's count before this batch
    pages: int  # what this batch takes from it
    read_at: Any  # the shard's update time when read (None: it did not exist)


def shard_id(shard: int) -> str:
    return "budget" if shard == 0 else f"budget-{shard}"


def allowance(max_new: int, shards: int, shard: int) -> int:
    """Shard ``shard``'s part of ``max_new``: an even split, the first ones one more."""
    return max_new // shards + (1 if shard < max_new % shards else 0)


def first_shard(batch_id: str, shards: int) -> int:
    return zlib.crc32(batch_id.encode()) % shards


def scan_order(batch_id: str, shards: int) -> Iterator[int]:
    """The shards a batch takes its pages from, in order: its id's own, then the next ones."""
    start = first_shard(batch_id, shards)
    return ((start + step) % shards for step in range(shards))


async def take(
    job_ref: Any,
    batch_id: str,
    wanted: int,
    max_new: int,
    shards: int,
    deadline: dict[str, Any],
) -> list[Taken]:
    """Read the shards that give ``wanted`` pages (or all that is left), starting at the
    batch's own; what each gives."""
    taken: list[Taken] = []
    for shard in scan_order(batch_id, shards):
        if wanted <= 0:
            break
        ref = job_ref.collection(COLLECTION).document(shard_id(shard))
        count(reads=1)
        snap = await ref.get(**deadline)
        added = int((snap.to_dict() or {}).get("added") or 0) if snap.exists else 0
        room = max(0, allowance(max_new, shards, shard) - added)
        if room:
            pages = min(room, wanted)
            taken.append(Taken(shard, ref, added, pages, snap.update_time if snap.exists else None))
            wanted -= pages
    return taken


def stage(commit: Any, client: Any, taken: Sequence[Taken], expire_at: datetime) -> int:
    """The shards' new counts, in the batch's commit, each guarded by what was read (its update
    time, or its absence: a create); how many writes."""
    for part in taken:
        fields = {"added": part.added + part.pages, "expire_at": expire_at}
        if part.read_at is None:
            commit.create(part.ref, fields)
        else:
            commit.update(
                part.ref, fields, option=client.write_option(last_update_time=part.read_at)
            )
    return len(taken)
