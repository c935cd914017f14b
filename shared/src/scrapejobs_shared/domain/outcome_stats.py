"""Outcome statistics: what a commit of task outcomes adds to the time-bucketed totals, and how
totals become throughput, error rates and percentiles.

Totals are kept per 5-minute slot (``SLOT``): each commit that finishes tasks adds its outcomes
to one shard of its slot, in the same commit (so a redelivery never counts a task twice and a
crash never loses one). Service and fetch times are kept as histograms over fixed bounds, so
totals of any number of shards, slots or hours merge by addition and percentiles come from
the merged buckets.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from datetime import datetime, timedelta

from scrapejobs_shared.domain.metered import NOTHING, Metered
from scrapejobs_shared.domain.model_usage import ModelUsage
from scrapejobs_shared.domain.records import TaskRecord
from scrapejobs_shared.domain.statuses import TaskStatus
from scrapejobs_shared.extraction.unusable_pages import Unusable, unusable_kind

SLOT = timedelta(minutes=5)
HOUR = timedelta(hours=1)
DAY = timedelta(days=1)
# Upper bounds (ms) of the histogram buckets; one more bucket holds what is above the last.
BOUNDS_MS: tuple[int, ...] = (10, 25, 50, 100, 250, 500, 1000, 2500, 5000, 10000, 30000, 60000)
UNUSABLE_PREFIX = "page_"  # stored fields of the unusable pages' counts: page_challenge, ...
FINISHED = (TaskStatus.SUCCEEDED, TaskStatus.FAILED, TaskStatus.DEAD_LETTERED, TaskStatus.CANCELLED)


def _empty() -> tuple[int, ...]:
    return (0,) * (len(BOUNDS_MS) + 1)


@dataclass(frozen=True, slots=True)
class Histogram:
    """Counts per bucket of ``BOUNDS_MS`` (the last bucket is open above), and their sum."""

    buckets: tuple[int, ...] = field(default_factory=_empty)
    sum_ms: int = 0

    @property
    def count(self) -> int:
        return sum(self.buckets)

    @classmethod
    def of(cls, values_ms: Sequence[int]) -> Histogram:
        buckets = list(_empty())
        for value in values_ms:
            buckets[_bucket(value)] += 1
        return cls(tuple(buckets), sum(values_ms))

    def __add__(self, other: Histogram) -> Histogram:
        merged = tuple(a + b for a, b in zip(self.buckets, other.buckets, strict=True))
        return Histogram(merged, self.sum_ms + other.sum_ms)

    def mean_ms(self) -> float | None:
        return self.sum_ms / self.count if self.count else None

    def percentile_ms(self, q: float) -> float | None:
        """The ``q`` quantile (0 < q ≤ 1), interpolated linearly inside its bucket (the open
        last bucket is taken to end at twice its lower bound)."""
        total = self.count
        if not total:
            return None
        rank = q * total
        seen = 0
        for index, n in enumerate(self.buckets):
            if n and seen + n >= rank:
                low = BOUNDS_MS[index - 1] if index else 0
                high = BOUNDS_MS[index] if index < len(BOUNDS_MS) else 2 * BOUNDS_MS[-1]
                return round(low + (high - low) * (rank - seen) / n, 1)
            seen += n
        return float(2 * BOUNDS_MS[-1])  # pragma: no cover - rank <= total always stops above


def _bucket(value_ms: int) -> int:
    for index, bound in enumerate(BOUNDS_MS):
        if value_ms <= bound:
            return index
    return len(BOUNDS_MS)


@dataclass(frozen=True, slots=True)
class Totals:
    """Outcomes of finished tasks over some span: counts by final status, service time (a task
    picked up by a worker until its outcome is known), fetch time, and what the ai stages of
    those tasks used."""

    finished: Mapping[TaskStatus, int] = field(default_factory=dict)
    service: Histogram = field(default_factory=Histogram)
    fetch: Histogram = field(default_factory=Histogram)
    ai: ModelUsage = field(default_factory=ModelUsage)
    unusable: Mapping[Unusable, int] = field(default_factory=dict)  # failed pages, by kind
    metered: Metered = NOTHING  # what pages fetched used beside their fetches

    def __add__(self, other: Totals) -> Totals:
        finished = {s: self.count(s) + other.count(s) for s in FINISHED}
        unusable = {k: self.unusable_count(k) + other.unusable_count(k) for k in Unusable}
        return Totals(
            finished,
            self.service + other.service,
            self.fetch + other.fetch,
            self.ai + other.ai,
            {k: n for k, n in unusable.items() if n},
            self.metered + other.metered,
        )

    def count(self, status: TaskStatus) -> int:
        return self.finished.get(status, 0)

    def unusable_count(self, kind: Unusable) -> int:
        return self.unusable.get(kind, 0)

    @property
    def unbilled(self) -> int:
        """Pages fetched that held nothing usable (a challenge, a login wall, an empty shell)."""
        return sum(self.unusable.values())

    @property
    def pages_charged(self) -> int:
        """Pages charged: fetched with a response from the site, whatever its status, unless it
        held nothing usable. A page reused from the page cache, a fetch that never got a
        response and a retried attempt are not."""
        return self.fetch.count - self.unbilled

    @property
    def credits(self) -> int:
        """What Firecrawl charges: a credit a page charged, and what else the pages used costs
        (one more a PDF page read: Metered.credits)."""
        return self.pages_charged + self.metered.credits

    @property
    def page_credits(self) -> int:
        """The credits of pages alone (a tenant's pages against its quota): not searches'."""
        return self.pages_charged + self.metered.page_credits

    @property
    def uncharged(self) -> int:
        """Tasks that ran to an outcome without a charge."""
        return max(0, self.processed - self.pages_charged)

    @property
    def processed(self) -> int:
        """Tasks that ran to an outcome (cancelled ones never ran)."""
        return sum(self.count(s) for s in FINISHED if s is not TaskStatus.CANCELLED)

    @property
    def errors(self) -> int:
        return self.count(TaskStatus.FAILED) + self.count(TaskStatus.DEAD_LETTERED)

    def error_rate(self) -> float | None:
        return round(self.errors / self.processed, 4) if self.processed else None

    @property
    def empty(self) -> bool:
        """No outcome and nothing metered beside one (a search)."""
        return not any(self.finished.values()) and self.metered.empty

    def to_fields(self) -> dict[str, int]:
        """Flat numeric fields for a store (added to a shard's, field by field)."""
        fields = {status.value: n for status, n in self.finished.items() if n}
        fields |= {UNUSABLE_PREFIX + kind.value: n for kind, n in self.unusable.items() if n}
        for name, histogram in (("service", self.service), ("fetch", self.fetch)):
            if histogram.count:
                fields[f"{name}_ms"] = histogram.sum_ms
                for index, n in enumerate(histogram.buckets):
                    if n:
                        fields[f"{name}_b{index:02d}"] = n
        return fields | self.metered.to_fields() | self.ai.to_fields()

    @classmethod
    def from_fields(cls, fields: Mapping[str, object]) -> Totals:
        def number(name: str) -> int:
            value = fields.get(name)
            return int(value) if isinstance(value, int | float) else 0

        def histogram(name: str) -> Histogram:
            buckets = tuple(number(f"{name}_b{i:02d}") for i in range(len(BOUNDS_MS) + 1))
            return Histogram(buckets, number(f"{name}_ms"))

        finished = {status: number(status.value) for status in FINISHED}
        unusable = {k: n for k in Unusable if (n := number(UNUSABLE_PREFIX + k.value))}
        return cls(
            finished,
            histogram("service"),
            histogram("fetch"),
            ModelUsage.from_fields(fields),
            unusable,
            Metered.from_fields(fields),
        )


def outcome_totals(
    results: Sequence[TaskRecord], service_ms: Mapping[str, int], ai: ModelUsage | None = None
) -> Totals:
    """What the tasks that became terminal in one commit add (``service_ms`` by task id, for
    the tasks a worker ran; ``ai``: what their ai stages used)."""
    finished: dict[TaskStatus, int] = {}
    unusable: dict[Unusable, int] = {}
    for record in results:
        finished[record.status] = finished.get(record.status, 0) + 1
        kind = unusable_kind(record.error) if record.status is TaskStatus.FAILED else None
        if kind is not None:
            unusable[kind] = unusable.get(kind, 0) + 1
    ran = [service_ms[r.id] for r in results if r.id in service_ms]
    fetched = [r.elapsed_ms for r in results if r.elapsed_ms is not None]
    metered = sum((r.metered for r in results if r.elapsed_ms is not None), NOTHING)
    return Totals(
        finished, Histogram.of(ran), Histogram.of(fetched), ai or ModelUsage(), unusable, metered
    )


def slot_of(moment: datetime) -> datetime:
    """The start of the 5-minute slot holding ``moment``."""
    return moment.replace(minute=moment.minute - moment.minute % 5, second=0, microsecond=0)


def hour_of(moment: datetime) -> datetime:
    return moment.replace(minute=0, second=0, microsecond=0)


def slots_between(start: datetime, end: datetime) -> list[datetime]:
    """Every slot overlapping [start, end], oldest first."""
    slots = []
    slot = slot_of(start)
    while slot <= end:
        slots.append(slot)
        slot += SLOT
    return slots


def day_of(moment: datetime) -> datetime:
    return moment.replace(hour=0, minute=0, second=0, microsecond=0)


def hours_of_day(day: datetime) -> list[datetime]:
    """The 24 hours of the (UTC) day starting at ``day``."""
    return [day + HOUR * n for n in range(24)]


def slots_of_hour(hour: datetime) -> list[datetime]:
    """The twelve slots of the hour starting at ``hour``."""
    return slots_between(hour, hour + HOUR - SLOT)
