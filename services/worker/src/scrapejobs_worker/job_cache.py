"""Jobs as this process has seen them: specs are immutable once submitted, so one read per job
per process; the first sight of a still-queued job marks it ``running``."""

from __future__ import annotations

from collections import OrderedDict

from scrapejobs_shared.domain.clock import Clock
from scrapejobs_shared.domain.jobspec import JobSpec
from scrapejobs_shared.domain.statuses import JobStatus
from scrapejobs_shared.ports.job_store import JobStore


class JobCache:
    def __init__(self, store: JobStore, clock: Clock, max_entries: int = 1024) -> None:
        self._store = store
        self._clock = clock
        self._max = max_entries
        self._specs: OrderedDict[str, JobSpec] = OrderedDict()

    async def spec(self, job_id: str) -> JobSpec | None:
        spec = self._specs.get(job_id)
        if spec is not None:
            self._specs.move_to_end(job_id)
            return spec
        job = await self._store.get_job(job_id)
        if job is None:
            return None
        if job.status is JobStatus.QUEUED:
            await self._store.set_job_status(job_id, JobStatus.RUNNING, self._clock())
        self._specs[job_id] = job.spec
        if len(self._specs) > self._max:
            self._specs.popitem(last=False)
        return job.spec
