"""A job's files (its pages' screenshots), served to the job's tenant only: the job is read
first (another tenant's, an expired or a missing job: 404, as everywhere), then the file under
the job's tenant's key (``ports/file_store.py``). A file outlives nothing: once its job
expires it is not served, whatever the bucket still holds."""

from __future__ import annotations

from scrapejobs_dispatcher.jobs.job_errors import live_job
from scrapejobs_shared.domain.clock import Clock
from scrapejobs_shared.domain.tenancy import Caller
from scrapejobs_shared.errors import NotFound
from scrapejobs_shared.ports.file_store import FILE_NAME, FileStore, StoredFile, file_key
from scrapejobs_shared.ports.jobs import Jobs


class FileNotFound(NotFound):
    template = "file {} not found"


class JobFiles:
    def __init__(self, jobs: Jobs, files: FileStore | None, clock: Clock) -> None:
        self._jobs = jobs
        self._files = files
        self._clock = clock

    async def file(self, job_id: str, task_id: str, name: str, caller: Caller) -> StoredFile:
        now = self._clock()
        job = await live_job(self._jobs, job_id, now, caller)
        if self._files is None or FILE_NAME.fullmatch(name) is None:
            raise FileNotFound(f"{task_id}/{name}")
        found = await self._files.get(file_key(job.tenant, job.id, task_id, name), now)
        if found is None:
            raise FileNotFound(f"{task_id}/{name}")
        return found
