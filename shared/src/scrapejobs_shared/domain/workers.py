"""What a worker process says about itself (the workers view): who it is, when it started,
what it finished since it last said so, and what it has in hand now."""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from datetime import datetime, timedelta

SEEN_WITHIN = timedelta(minutes=5)  # a worker not heard from for this long is not listed
KEPT_FOR = timedelta(days=1)  # its document's TTL after it was last heard from


@dataclass(frozen=True, slots=True)
class ProxyUse:
    """A proxy as one worker process used it since it started (named by its label: no
    credentials): hops it served, times it could not be reached or refused the tunnel."""

    label: str
    served: int = 0
    failed: int = 0


def proxy_totals(views: Iterable[WorkerView]) -> tuple[ProxyUse, ...]:
    """Each proxy's counts summed over worker processes (each since it started), by label."""
    served: dict[str, int] = {}
    failed: dict[str, int] = {}
    for view in views:
        for use in view.proxies:
            served[use.label] = served.get(use.label, 0) + use.served
            failed[use.label] = failed.get(use.label, 0) + use.failed
    return tuple(ProxyUse(label, served[label], failed[label]) for label in sorted(served))


@dataclass(frozen=True, slots=True)
class WorkerBeat:
    """One report: ``batches`` and ``pages`` are what the process finished since its previous
    report (the store adds them up); the rest is its state at ``seen_at``."""

    worker_id: str
    revision: str
    started_at: datetime
    seen_at: datetime
    batches: int = 0
    pages: int = 0
    batches_in_flight: int = 0
    pages_in_flight: int = 0
    proxies: tuple[ProxyUse, ...] = ()  # totals since it started (not since the last report)


@dataclass(frozen=True, slots=True)
class WorkerView:
    """A worker process as last heard from, with everything it finished since it started."""

    worker_id: str
    revision: str
    started_at: datetime
    last_seen: datetime
    batches: int
    pages: int
    batches_in_flight: int
    pages_in_flight: int
    proxies: tuple[ProxyUse, ...] = ()
