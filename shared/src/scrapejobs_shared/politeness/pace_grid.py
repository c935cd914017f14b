"""A host's pace across every instance without a hot document.

A pace of one request every ``interval`` seconds is one write per request start on whatever
records it; Firestore takes about one write a second on a document (``make scale``: one host at
50 requests a second, kept on its host document, refused 39,000 writes and fell to 0.4 pages
a second). A pace faster than ``PACE_DOC_WRITES_S`` is therefore kept on ``shards`` documents,
each written at most that often, laid on one grid: request starts fall only on the instants
``n * interval`` (in seconds since the epoch), and instant ``n`` belongs to shard
``n mod shards``, whose record says the next instant it allows (``next_at``). A start takes an
instant by a write guarded by what it read of that one shard; two starts racing for one
instant cannot both win, so there is never more than one start an instant, whichever
instances ask: at most ``1 / interval`` starts in any second, plus one at its edge.

An acquirer picks one of the next ``spread`` instants at random (concurrent acquirers race
for different shards) and waits for it once it is taken: at most ``spread * interval``.
A pace of ``PACE_DOC_WRITES_S`` or slower is one shard and no grid: the host's own document,
a start at once when its ``next_at`` has passed, as before."""

from __future__ import annotations

import math
import random
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta

from scrapejobs_shared.politeness.host_gate import HostLimits

PACE_DOC_WRITES_S = 0.5  # the most writes a second a pace shard takes (Firestore: ~1)
SPREAD_S = 0.5  # how far ahead an acquirer may pick its instant


@dataclass(frozen=True, slots=True)
class Instant:
    shard: int
    start: datetime


@dataclass(frozen=True, slots=True)
class PaceGrid:
    interval_s: float
    shards: int

    @classmethod
    def of(cls, limits: HostLimits) -> PaceGrid | None:
        """The grid of a pace faster than one shard takes (None: no pace, or one shard)."""
        if not limits.min_interval_s:
            return None
        shards = math.ceil(1.0 / (limits.min_interval_s * PACE_DOC_WRITES_S) - 1e-9)
        return cls(limits.min_interval_s, shards) if shards > 1 else None

    @property
    def spread(self) -> int:
        """Instants an acquirer picks among (at least 1, at most every shard once)."""
        return max(1, min(self.shards, round(SPREAD_S / self.interval_s)))

    def pick(self, now: datetime, rng: random.Random | None = None) -> Instant:
        """One of the next ``spread`` instants at or after ``now``, at random."""
        first = math.ceil(now.timestamp() / self.interval_s - 1e-9)
        n = first + (rng or random).randrange(self.spread)
        return self.instant(n)

    def instant(self, n: int) -> Instant:
        start = datetime.fromtimestamp(n * self.interval_s, UTC)
        return Instant(n % self.shards, start)

    def shard_at(self, start: datetime) -> int:
        return round(start.timestamp() / self.interval_s) % self.shards

    def allows(self, next_at: datetime | None, instant: Instant) -> bool:
        """Whether the shard, whose record says ``next_at``, still has ``instant`` free."""
        return next_at is None or next_at <= instant.start + timedelta(microseconds=1)

    def after(self, instant: Instant) -> datetime:
        """The shard's ``next_at`` once ``instant`` is taken: its next instant."""
        return instant.start + timedelta(seconds=self.interval_s * self.shards)
