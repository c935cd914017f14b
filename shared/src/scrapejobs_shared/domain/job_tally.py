"""What a job's finished tasks add beside their status counts, kept with its counters in the
commit that finishes them: what its ``ai`` stages used, its pages that ran without a
charge (reused from the page cache, no response from the site, or nothing usable in it:
``Totals.uncharged``), which its tenant's daily quota gives back once the job has ended, and
the PDF pages its tasks read (a credit each beside the page's own, as Firecrawl counts)."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field, replace
from typing import Any

from scrapejobs_shared.domain.model_usage import ModelUsage
from scrapejobs_shared.domain.records import JobRecord

UNCHARGED = "uncharged"
DOCUMENT_PAGES = "document_pages"


@dataclass(frozen=True, slots=True)
class JobTally:
    usage: ModelUsage = field(default_factory=ModelUsage)
    uncharged: int = 0  # tasks that ran to an outcome without a charge
    document_pages: int = 0  # PDF pages its tasks read

    def __add__(self, other: JobTally) -> JobTally:
        return JobTally(
            self.usage + other.usage,
            self.uncharged + other.uncharged,
            self.document_pages + other.document_pages,
        )

    @property
    def empty(self) -> bool:
        return self.usage.empty and not self.uncharged and not self.document_pages

    def to_fields(self) -> dict[str, int]:
        """The nonzero figures as counter fields."""
        counts = {UNCHARGED: self.uncharged, DOCUMENT_PAGES: self.document_pages}
        return self.usage.to_fields() | {name: n for name, n in counts.items() if n}

    @classmethod
    def from_fields(cls, doc: Mapping[str, Any]) -> JobTally:
        return cls(
            ModelUsage.from_fields(doc),
            int(doc.get(UNCHARGED) or 0),
            int(doc.get(DOCUMENT_PAGES) or 0),
        )


def with_tally(job: JobRecord, tally: JobTally) -> JobRecord:
    """``job`` as read with its counts: its tally's figures on it."""
    if tally.empty:
        return job
    usage = tally.usage if not tally.usage.empty else job.ai_usage
    return replace(
        job, ai_usage=usage, uncharged=tally.uncharged, document_pages=tally.document_pages
    )
