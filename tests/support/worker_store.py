"""A store as a worker process holds it (its composition root's ``RecordedStore``): a test that
settles tasks itself, playing the worker, has their outcomes put in the statistics at once."""

from __future__ import annotations

from typing import cast

from scrapejobs_shared.adapters.memory.job_store import MemoryJobStore
from scrapejobs_shared.delivery.recorded_store import RecordedStore
from scrapejobs_shared.delivery.stats_buffer import StatsBuffer
from scrapejobs_shared.ports.job_store import JobStore


def as_a_worker(store: MemoryJobStore) -> JobStore:
    return cast(JobStore, RecordedStore(store, StatsBuffer(store, every_s=0)))
