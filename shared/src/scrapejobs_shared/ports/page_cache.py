"""Pages kept for reuse (``options.cache_max_age_s``, Firecrawl's ``maxAge``): a succeeded
page's outcome under a digest of its URL and of everything in the job that shapes it, so a later
job asking for the same result within the age it accepts gets it without a fetch."""

from __future__ import annotations

import hashlib
import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Any, Protocol

from scrapejobs_shared.domain.jobspec import JobSpec

MAX_DATA_CHARS = 900_000  # a page's data as JSON, at most (under a Firestore document's 1 MiB)


@dataclass(frozen=True, slots=True)
class CachedPage:
    http_status: int | None
    data: dict[str, Any]
    fetched_at: datetime
    truncated_fields: tuple[str, ...] = ()
    field_errors: dict[str, str] | None = None


def page_key(url: str, spec: JobSpec) -> str:
    """What a page is kept under: its URL and the parts of the job that decide its result."""
    return page_keys([url], spec)[0]


def page_keys(urls: Sequence[str], spec: JobSpec) -> list[str]:
    """:func:`page_key` of each of ``urls`` (the job's part is written once)."""
    shaping = json.dumps(
        [
            spec.model_dump(mode="json", include={"extract", "pipeline"}),
            spec.options.model_dump(
                mode="json", include={"formats", "content", "headers", "render", "respect_robots"}
            ),
        ],
        sort_keys=True,
        separators=(",", ":"),
    )
    return [hashlib.sha256(f"{url}\n{shaping}".encode()).hexdigest() for url in urls]


class PageCache(Protocol):
    async def get_many(self, keys: Sequence[str], fetched_after: datetime) -> dict[str, CachedPage]:
        """The pages kept under ``keys`` fetched after ``fetched_after``, by key (one read of
        them all: a delivery looks up its batch at once)."""

    async def put_many(self, pages: Mapping[str, CachedPage], expire_at: datetime) -> None:
        """Keep ``pages`` (one write of them all); one too large to keep is left out."""
