"""Every simulated Firestore write, by document: what Firestore's limits allow, and the rates
each document took.

``commit(paths, at)`` is one commit (a batch, a transaction's, or one write): refused with
``Aborted`` when a document in it is past its sustained rate and its burst (a token bucket per
document), or with ``InvalidArgument`` over the writes a commit may hold; otherwise every
document is charged a token and counted in its second. A collection's operations are held to
the 500/50/5 ramp from its first write. ``report()`` gives each document's peak sustained rate
(writes in its busiest ``window_s``, 10 s, divided by it), the p99 over documents, and the refusals.
"""

from __future__ import annotations

import math
from collections import Counter, defaultdict
from collections.abc import Sequence
from dataclasses import dataclass, field

from google.api_core import exceptions as gexc

from scrapejobs_scale.busiest import busiest
from scrapejobs_scale.limits import FirestoreLimits

CONTENTION = "Too much contention on these datastore entities. Please try again."


@dataclass(slots=True)
class _Bucket:
    tokens: float
    at: float


@dataclass(slots=True)
class _Ramp:
    opened: float
    second: int = -1
    used: int = 0


@dataclass(frozen=True, slots=True)
class DocumentRate:
    path: str
    writes: int
    peak_per_s: float  # writes in the busiest window, per second


@dataclass(frozen=True, slots=True)
class LedgerReport:
    documents: int
    writes: int
    commits: int
    reads: int
    hottest: tuple[DocumentRate, ...]  # the busiest, most first
    p99_peak_per_s: float
    refused_contention: int
    refused_ramp: int
    refused_size: int
    over_sustained: tuple[DocumentRate, ...]  # peak above the sustained rate
    contended: tuple[tuple[str, int], ...]  # documents that refused commits, most first


@dataclass
class DocumentLedger:
    limits: FirestoreLimits = field(default_factory=FirestoreLimits)
    window_s: float = 10.0  # "sustained": the busiest 10 s
    _buckets: dict[str, _Bucket] = field(default_factory=dict)
    _ramps: dict[str, _Ramp] = field(default_factory=dict)
    _seconds: dict[str, Counter[int]] = field(default_factory=lambda: defaultdict(Counter))
    commits: int = 0
    reads: int = 0
    refused_contention: int = 0
    refused_ramp: int = 0
    refused_size: int = 0
    refused_at: Counter[str] = field(default_factory=Counter)  # document → commits refused
    last_busy: str = ""  # the document the last refused commit found busy

    def commit(self, paths: Sequence[str], at: float, sizes: Sequence[int] = ()) -> None:
        """One commit writing ``paths`` (document paths, ``collection/id/...``) at ``at``
        (simulated seconds); raises what Firestore would, having charged nothing."""
        if len(paths) > self.limits.writes_per_commit:
            raise _refused(
                gexc.InvalidArgument,
                f"maximum {self.limits.writes_per_commit} writes allowed per request",
            )
        if any(size > self.limits.document_bytes for size in sizes):
            self.refused_size += 1
            raise _refused(gexc.InvalidArgument, "Document exceeds the maximum size")
        buckets = [self._bucket(path, at) for path in paths]
        busy = [path for path, bucket in zip(paths, buckets, strict=True) if bucket.tokens < 1.0]
        if busy:
            self.refused_contention += 1
            self.refused_at.update(busy)
            self.last_busy = busy[0]
            raise _refused(gexc.Aborted, CONTENTION)
        if not self._ramped(paths, at):
            self.refused_ramp += 1
            raise _refused(gexc.Aborted, CONTENTION)
        second = math.floor(at)
        for path, bucket in zip(paths, buckets, strict=True):
            bucket.tokens -= 1.0
            self._seconds[path][second] += 1
        self.commits += 1

    def read(self, documents: int = 1) -> None:
        self.reads += documents

    def _bucket(self, path: str, at: float) -> _Bucket:
        burst = self.limits.burst_writes_per_doc
        bucket = self._buckets.get(path)
        if bucket is None:
            bucket = self._buckets[path] = _Bucket(burst, at)
        else:
            earned = (at - bucket.at) * self.limits.sustained_writes_per_doc_s
            bucket.tokens = min(burst, bucket.tokens + earned)
            bucket.at = at
        return bucket

    def _ramped(self, paths: Sequence[str], at: float) -> bool:
        """Each collection's operations this second within what its age allows (500/50/5)."""
        second = math.floor(at)
        wanted = Counter(collection_of(path) for path in paths)
        ramps = []
        for collection, count in wanted.items():
            ramp = self._ramps.get(collection)
            if ramp is None:
                # a root collection (jobs, hosts, stats_slots) has taken traffic for as long as
                # the deployment has run: ramped already; a new job's batches are a new range
                opened = at if "/" in collection else -math.inf
                ramp = self._ramps[collection] = _Ramp(opened=opened)
            if ramp.second != second:
                ramp.second, ramp.used = second, 0
            if ramp.used + count > self.allowed_ops_s(ramp.opened, at):
                return False
            ramps.append((ramp, count))
        for ramp, count in ramps:
            ramp.used += count
        return True

    def allowed_ops_s(self, opened: float, at: float) -> float:
        if opened == -math.inf:
            return math.inf
        steps = max(0.0, at - opened) // self.limits.ramp_step_s
        return float(self.limits.ramp_start_ops_s * self.limits.ramp_growth**steps)

    def peak_per_s(self, path: str) -> float:
        """The most writes ``path`` took in any ``window_s`` window, per second."""
        seconds = self._seconds.get(path)
        if not seconds:
            return 0.0
        window = max(1, round(self.window_s))
        return busiest(seconds, window) / window

    def report(self, top: int = 10) -> LedgerReport:
        rates = sorted(
            (
                DocumentRate(path, sum(seconds.values()), self.peak_per_s(path))
                for path, seconds in self._seconds.items()
            ),
            key=lambda rate: (-rate.peak_per_s, rate.path),
        )
        sustained = self.limits.sustained_writes_per_doc_s
        return LedgerReport(
            documents=len(rates),
            writes=sum(rate.writes for rate in rates),
            commits=self.commits,
            reads=self.reads,
            hottest=tuple(rates[:top]),
            p99_peak_per_s=rates[len(rates) // 100].peak_per_s if rates else 0.0,
            refused_contention=self.refused_contention,
            refused_ramp=self.refused_ramp,
            refused_size=self.refused_size,
            over_sustained=tuple(rate for rate in rates if rate.peak_per_s > sustained),
            contended=tuple(self.refused_at.most_common(top)),
        )


def _refused(kind: type[gexc.GoogleAPICallError], message: str) -> gexc.GoogleAPICallError:
    """The client library's error for what Firestore answered (its classes are untyped)."""
    error: gexc.GoogleAPICallError = kind(message)
    return error


def collection_of(path: str) -> str:
    """``jobs/j1/batches/b1`` → ``jobs/j1/batches``: a collection's documents share its ramp (one
    job's batches are one new key range; another job's are another)."""
    return path.rpartition("/")[0]
