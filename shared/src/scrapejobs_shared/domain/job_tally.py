"""What a job's finished tasks add beside their status counts, kept with its counters in the
commit that finishes them: what its ``ai`` stages used, its pages that ran without a
charge (reused from the page cache, no response from the site, or nothing usable in it:
``Totals.uncharged``), which its tenant's daily quota gives back once the job has ended, and
what its tasks used beside their fetches (domain/metered.py: a document's pages, screenshots)."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field, replace
from typing import Any

from scrapejobs_shared.domain.metered import NOTHING, Metered
from scrapejobs_shared.domain.model_usage import ModelUsage
from scrapejobs_shared.domain.records import JobRecord

UNCHARGED = "uncharged"


@dataclass(frozen=True, slots=True)
class JobTally:
    usage: ModelUsage = field(default_factory=ModelUsage)
    uncharged: int = 0  # tasks that ran to an outcome without a charge
    metered: Metered = NOTHING  # what its tasks used beside their fetches

    def __add__(self, other: JobTally) -> JobTally:
        return JobTally(
            self.usage + other.usage,
            self.uncharged + other.uncharged,
            self.metered + other.metered,
        )

    @property
    def empty(self) -> bool:
        return self.usage.empty and not self.uncharged and self.metered.empty

    def to_fields(self) -> dict[str, int]:
        """The nonzero figures as counter fields."""
        uncharged = {UNCHARGED: self.uncharged} if self.uncharged else {}
        return self.usage.to_fields() | uncharged | self.metered.to_fields()

    @classmethod
    def from_fields(cls, doc: Mapping[str, Any]) -> JobTally:
        return cls(
            ModelUsage.from_fields(doc),
            int(doc.get(UNCHARGED) or 0),
            Metered.from_fields(doc),
        )


def with_tally(job: JobRecord, tally: JobTally) -> JobRecord:
    """``job`` as read with its counts: its tally's figures on it."""
    if tally.empty:
        return job
    usage = tally.usage if not tally.usage.empty else job.ai_usage
    return replace(job, ai_usage=usage, uncharged=tally.uncharged, metered=tally.metered)
