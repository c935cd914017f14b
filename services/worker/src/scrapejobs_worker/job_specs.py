"""Per-process cache of job specs (immutable once submitted; status is read at claim time)."""

from __future__ import annotations

from collections import OrderedDict

from scrapejobs_shared.domain.jobspec import JobSpec
from scrapejobs_shared.ports.job_store import JobStore


class JobSpecCache:
    def __init__(self, store: JobStore, max_entries: int = 1024) -> None:
        self._store = store
        self._max = max_entries
        self._specs: OrderedDict[str, JobSpec] = OrderedDict()

    async def get(self, job_id: str) -> JobSpec | None:
        spec = self._specs.get(job_id)
        if spec is not None:
            self._specs.move_to_end(job_id)
            return spec
        job = await self._store.get_job(job_id)
        if job is None:
            return None
        self._specs[job_id] = job.spec
        if len(self._specs) > self._max:
            self._specs.popitem(last=False)
        return job.spec
