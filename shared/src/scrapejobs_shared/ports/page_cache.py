"""Pages kept for reuse (``options.cache_max_age_s``, Firecrawl's ``maxAge``): an index over
stored results. Under a digest of a page's URL and of everything in the job that shapes its
result, an entry names the task whose succeeded result it is and when it was fetched, so a later
job asking for the same result within the age it accepts reads that result instead of fetching.
The result itself stays where it is (its job's retention bounds the entry's use). Entries are
written by the store with the results they name, in the same commit (a finished task whose
``FinishTask.kept_under`` names its key); this port reads them."""

from __future__ import annotations

import hashlib
import json
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Protocol

from scrapejobs_shared.domain.jobspec import JobSpec
from scrapejobs_shared.domain.records import TaskRecord
from scrapejobs_shared.options.page_cache import MAX_CACHE_AGE_S


@dataclass(frozen=True, slots=True)
class KeptPage:
    job_id: str
    task_id: str
    fetched_at: datetime


def page_key(url: str, spec: JobSpec, *, tenant: str) -> str:
    """What a page is kept under: its URL, the parts of the job that decide its result, and
    the tenant (a tenant reuses only its own pages: whether, and when, another tenant fetched
    a URL is none of its business)."""
    return page_keys([url], spec, tenant=tenant)[0]


def page_keys(urls: Sequence[str], spec: JobSpec, *, tenant: str) -> list[str]:
    """:func:`page_key` of each of ``urls`` (the job's part is written once)."""
    key_of = page_key_of(spec, tenant=tenant)
    return [key_of(url) for url in urls]


def page_key_of(spec: JobSpec, *, tenant: str) -> Callable[[str], str]:
    """:func:`page_key` for ``spec``'s pages, the job's part written once."""
    shaping = json.dumps(
        [
            tenant,
            spec.model_dump(mode="json", include={"extract", "pipeline"}),
            spec.options.model_dump(
                mode="json", include={"formats", "content", "headers", "render", "respect_robots"}
            ),
        ],
        sort_keys=True,
        separators=(",", ":"),
    )
    return lambda url: hashlib.sha256(f"{url}\n{shaping}".encode()).hexdigest()


def kept_page(record: TaskRecord, now: datetime) -> tuple[KeptPage, datetime]:
    """The entry of a kept result, and when it expires: its fetch's age limit, or its job's
    retention if sooner."""
    fetched_at = record.fetched_at or now
    return (
        KeptPage(record.job_id, record.id, fetched_at),
        min(fetched_at + timedelta(seconds=MAX_CACHE_AGE_S), record.expire_at),
    )


class PageCache(Protocol):
    async def get_many(self, keys: Sequence[str], fetched_after: datetime) -> dict[str, KeptPage]:
        """The entries under ``keys`` of pages fetched after ``fetched_after``, by key (one
        read of them all: a delivery looks up its batch at once)."""
