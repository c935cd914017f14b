"""Reading an uploaded file as a job's one page: checked (its size, what it asks for), read in
a process of its own (:class:`.parsing_port.UploadParsing`), its result recorded as a finished
job of the tenant's (JobIntake.record: the same quotas and retention as any job; its results,
export and deletion as any job's)."""

from __future__ import annotations

import contextlib
from dataclasses import dataclass
from typing import Any

from pydantic import ValidationError

from scrapejobs_dispatcher.jobs.job_errors import UPLOAD_LABEL
from scrapejobs_dispatcher.jobs.job_service import JobView
from scrapejobs_dispatcher.submission.intake import JobIntake
from scrapejobs_dispatcher.submission.submission import Submission
from scrapejobs_dispatcher.submission.sync_scrape import Scraped
from scrapejobs_shared.domain.jobspec import JobOptions, JobRequest, JobSpec, PageRequest
from scrapejobs_shared.domain.records import TaskOutcome
from scrapejobs_shared.errors import InvalidInput, first_problem
from scrapejobs_shared.extraction.formats import FORMATS
from scrapejobs_shared.ports.task_results import TaskResults

from .parsing_port import UploadParsing
from .upload import Upload, UploadTooLarge
from .upload_slots import UploadSlots

# the options that say how a page is read; the others say how it is fetched
READ_OPTIONS = frozenset({"formats", "content", "documents", "retention_days"})
NO_AI = "the ai stage does not run on uploads (it runs on the workers' processing lane)"


@dataclass(frozen=True, slots=True)
class UploadLimits:
    max_bytes: int  # SCRAPEJOBS_MAX_UPLOAD_BYTES


@dataclass(eq=False)
class UploadService:
    jobs: JobIntake
    results: TaskResults
    parsing: UploadParsing
    limits: UploadLimits
    slots: UploadSlots

    def holding(self, tenant: str) -> contextlib.AbstractContextManager[None]:
        """A place for ``tenant``'s upload, held from before its body is read to its answer
        (``UploadsBusy``, ``TenantUploadsBusy`` when there is none: upload_slots.py)."""
        return self.slots.holding(tenant)

    def check_size(self, size: int | None) -> None:
        """:class:`UploadTooLarge` for a file (or a request) over the limit."""
        if size is not None and size > self.limits.max_bytes:
            raise UploadTooLarge(size, self.limits.max_bytes)

    async def parse(self, upload: Upload, request: PageRequest, tenant: str) -> Scraped:
        """``upload`` read as ``request`` asks, recorded as a finished job of ``tenant``'s."""
        self.check_size(len(upload.data))
        job_request = upload_job(upload, request)

        async def read(spec: JobSpec) -> TaskOutcome:  # once admitted: quota, patterns
            async with self.slots.turn(tenant):  # the tenants waiting take turns
                return await self.parsing.outcome(upload, spec)

        view: JobView = await self.jobs.record(Submission(job_request, tenant), read)
        page = await self.results.list_tasks(view.job.id, 1, None)
        return Scraped(view.job, page.items[0] if page.items else None)


def upload_job(upload: Upload, request: PageRequest) -> JobRequest:
    """The one-page job of an upload: what ``request`` asks of it, labelled with the file's
    name; a fetch option (none applies: nothing is fetched) or the ai stage is refused."""
    defaults = JobOptions()
    for name in JobOptions.model_fields:
        if name not in READ_OPTIONS and getattr(request.options, name) != getattr(defaults, name):
            raise InvalidInput(
                f"an upload is not fetched: leave options.{name} out", f"options.{name}"
            )
    staged = [f.name for f in FORMATS.stages(request.options.formats)]
    if staged:
        raise InvalidInput(f"{', '.join(staged)}: {NO_AI}", "options.formats")
    if any("ai" in stage.model_dump(exclude_none=True) for stage in request.pipeline):
        raise InvalidInput(NO_AI, "pipeline")
    native: dict[str, Any] = request.model_dump(mode="json", exclude_unset=True)
    native["url"] = upload.url
    native["labels"] = {**request.labels, UPLOAD_LABEL: upload.filename[:200]}
    try:
        return JobRequest.model_validate(native, strict=False)
    except ValidationError as exc:
        field, problem = first_problem(exc.errors(), default="request")
        raise InvalidInput(f"{field}: {problem}", field) from None
