"""Jobs as this process has seen them: specs are immutable once submitted, so one read per job
per process (concurrent lookups of a job share one read); the first sight of a still-queued job
marks it ``running``."""

from __future__ import annotations

import asyncio
import logging
from collections import OrderedDict
from dataclasses import dataclass, field

from scrapejobs_shared.domain.clock import Clock
from scrapejobs_shared.domain.jobspec import JobSpec
from scrapejobs_shared.domain.statuses import JobStatus
from scrapejobs_shared.ports.jobs import Jobs

log = logging.getLogger(__name__)


@dataclass(eq=False)
class JobCache:
    store: Jobs
    clock: Clock
    max_entries: int = 1024
    _specs: OrderedDict[str, JobSpec] = field(init=False, default_factory=OrderedDict)
    _loading: dict[str, asyncio.Future[JobSpec | None]] = field(init=False, default_factory=dict)

    async def spec(self, job_id: str) -> JobSpec | None:
        spec = self._specs.get(job_id)
        if spec is not None:
            self._specs.move_to_end(job_id)
            return spec
        loading = self._loading.get(job_id)
        if loading is not None:
            return await asyncio.shield(loading)
        future: asyncio.Future[JobSpec | None] = asyncio.get_running_loop().create_future()
        self._loading[job_id] = future
        try:
            spec = await self._load(job_id)
            future.set_result(spec)
            return spec
        except BaseException as exc:
            future.set_exception(exc)
            future.exception()  # retrieved: waiters re-raise it themselves
            raise
        finally:
            del self._loading[job_id]

    async def _load(self, job_id: str) -> JobSpec | None:
        job = await self.store.get_job(job_id)
        if job is None:
            return None
        if job.status is JobStatus.QUEUED:
            try:
                await self.store.set_job_status(job_id, JobStatus.RUNNING, self.clock())
            except Exception:  # informative only: the job's tasks run all the same
                log.warning("could not mark the job running", extra={"job_id": job_id})
        self._specs[job_id] = job.spec
        if len(self._specs) > self.max_entries:
            self._specs.popitem(last=False)
        return job.spec
