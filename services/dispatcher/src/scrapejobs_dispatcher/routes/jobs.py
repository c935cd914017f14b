"""REST resources: /v1/jobs."""

from __future__ import annotations

from typing import Annotated, Literal

from fastapi import Depends, Header, HTTPException, Path, Query, Request, Response
from fastapi.responses import StreamingResponse
from starlette.convertors import Convertor, register_url_convertor

from scrapejobs_dispatcher.dependencies import (
    ExportDep,
    FilesDep,
    JobsDep,
    RecoveryDep,
    SubmissionsDep,
)
from scrapejobs_dispatcher.jobs.result_export import (
    MEDIA_TYPES,
    ExportFormat,
    csv_chunks,
    filename,
    jsonl_chunks,
)
from scrapejobs_dispatcher.jobs.views import (
    JobDetail,
    JobList,
    JobSummary,
    Replayed,
    ResultPage,
    TaskResult,
    WebhookDeliveries,
    WebhookDeliveryView,
)
from scrapejobs_dispatcher.routes.native_router import error_responses, native_router
from scrapejobs_dispatcher.scheduling.scheduler_registry import SchedulerRegistry
from scrapejobs_dispatcher.scheduling.scheduler_trigger import (
    job_id_for_trigger,
    trigger_from_headers,
)
from scrapejobs_dispatcher.submission.submission import Submission
from scrapejobs_dispatcher.tenants.authentication import CallerDep, allowing
from scrapejobs_shared.domain.jobspec import JobRequest
from scrapejobs_shared.domain.statuses import JobStatus, TaskStatus
from scrapejobs_shared.domain.tenancy import TENANT_PATTERN, Caller, Role
from scrapejobs_shared.ports.file_store import FILE_NAME

RetryStatus = Literal["dead_lettered", "failed"]


class JobIdSegment(Convertor[str]):
    """A job id in a path: one segment with no ``:``, so that ``/v1/jobs/{id}:cancel`` is
    never read as the job ``{id}:cancel`` (a GET on it is a 405, not a 404)."""

    regex = "[^/:]+"

    def convert(self, value: str) -> str:
        return value

    def to_string(self, value: str) -> str:
        return value


register_url_convertor("job_id", JobIdSegment())
JobId = Annotated[str, Path(pattern=f"^{JobIdSegment.regex}$", description="The job's id")]

router = native_router("/v1/jobs", "jobs")
TenantFilter = Annotated[
    str | None,
    Query(
        pattern=TENANT_PATTERN,
        description="Admin keys: only this tenant's (default: every tenant's). A member's "
        "list is always its own tenant's.",
    ),
]
SubmittingCaller = Annotated[Caller, Depends(allowing(Role.MEMBER, Role.ADMIN, Role.SCHEDULER))]
ERRORS = error_responses(400, 401, 403, 404, 409, 422, 500)
SUBMIT_ERRORS = error_responses(400, 401, 403, 404, 409, 422, 500, 502, 504)  # a search's


@router.post("", status_code=202, response_model=JobDetail, responses=SUBMIT_ERRORS)
async def submit_job(
    body: JobRequest,
    request: Request,
    jobs: JobsDep,
    submissions: SubmissionsDep,
    response: Response,
    caller: SubmittingCaller,
    tenant: Annotated[
        str | None,
        Query(
            pattern=TENANT_PATTERN,
            description="Admin and scheduler keys: the tenant the job belongs to (default: "
            "the key's own). A member's jobs are its own tenant's.",
        ),
    ] = None,
    idempotency_key: Annotated[
        str | None,
        Header(
            alias="Idempotency-Key",
            pattern=r"^[ -~]{1,255}$",  # printable ASCII
            description="Retry-safe submission: the same key and body return the original job "
            "(header Idempotent-Replayed: true); another body with the key is a 422, a request "
            "while the first with the key is still in flight a 409. Keys are kept 24 h.",
        ),
    ] = None,
) -> JobDetail:
    """Accept a job: one task per URL, queued for the workers (a ``search``: one per page
    the search found, searched now).

    A Cloud Scheduler run (``X-CloudScheduler-JobName`` + ``X-CloudScheduler-ScheduleTime``)
    is submitted at most once: a retried trigger answers 200 with the job it created.
    """
    try:
        trigger = trigger_from_headers(request.headers)
    except ValueError as exc:
        raise HTTPException(400, f"invalid Cloud Scheduler headers: {exc}") from None
    if caller.role is Role.SCHEDULER and trigger is None:
        raise HTTPException(403, "a scheduler key submits only Cloud Scheduler's triggers")
    if caller.role is Role.MEMBER and trigger is not None:  # the run's id is the schedule's
        raise HTTPException(
            403,
            "Cloud Scheduler's headers (X-CloudScheduler-JobName, X-CloudScheduler-ScheduleTime) "
            "are accepted only from a scheduler key",
        )
    if tenant is not None and tenant != caller.tenant and caller.role is Role.MEMBER:
        raise HTTPException(403, "a member key submits only for its own tenant")
    owner = Caller(tenant or caller.tenant, caller.role, caller.key_id)
    if trigger is not None:
        registry: SchedulerRegistry = request.app.state.scheduler_registry
        registry.check(caller, trigger, owner.tenant, await request.body())
    if trigger is not None:  # a schedule's run is submitted once: its id is the run's
        submission = Submission(
            body,
            owner.tenant,
            job_id=job_id_for_trigger(trigger, owner.tenant),
            trigger=f"{trigger.job_name}@{trigger.schedule_time}",
        )
        idempotency_key = None
    else:
        submission = Submission(body, owner.tenant)
    submitted = await submissions.submit(submission, idempotency_key)
    if submitted.replayed:
        response.headers["Idempotent-Replayed"] = "true"
    elif not submitted.view.created:  # a retried trigger: the job it created
        response.status_code = 200
    response.headers["Location"] = f"/v1/jobs/{submitted.view.job.id}"
    return JobDetail.of_view(submitted.view)


@router.get("", response_model=JobList, responses=ERRORS)
async def list_jobs(
    jobs: JobsDep,
    caller: CallerDep,
    tenant: TenantFilter = None,
    status: JobStatus | None = None,
    page_size: Annotated[int, Query(ge=1, le=100)] = 20,
    page_token: str | None = None,
) -> JobList:
    """Jobs, newest first: the caller's tenant's (an admin's: every tenant's, or ``tenant``'s)."""
    page = await jobs.list_jobs(status, page_size, page_token, caller.scope(tenant))
    return JobList(
        jobs=[JobSummary.of(j) for j in page.items], next_page_token=page.next_page_token
    )


@router.get("/{job_id:job_id}", response_model=JobDetail, responses=ERRORS)
async def get_job(job_id: JobId, jobs: JobsDep, caller: CallerDep) -> JobDetail:
    """The job, with its counts and progress (another tenant's job is a 404)."""
    return JobDetail.of_view(await jobs.get(job_id, caller))


@router.get("/{job_id:job_id}/results", response_model=ResultPage, responses=ERRORS)
async def job_results(
    job_id: JobId,
    jobs: JobsDep,
    caller: CallerDep,
    page_size: Annotated[int, Query(ge=1, le=1000)] = 100,
    page_token: str | None = None,
) -> ResultPage:
    page = await jobs.results(job_id, page_size, page_token, caller)
    return ResultPage(
        results=[TaskResult.of(t) for t in page.items], next_page_token=page.next_page_token
    )


@router.get(
    "/{job_id:job_id}/results:export",
    response_class=StreamingResponse,
    responses={
        **ERRORS,
        200: {
            "description": "Every result of the job, streamed",
            "content": {media_type: {} for media_type in MEDIA_TYPES.values()},
        },
    },
)
async def export_results(
    job_id: JobId,
    exports: ExportDep,
    caller: CallerDep,
    export_format: Annotated[
        ExportFormat,
        Query(
            alias="format",
            description="jsonl: one result per line, as the results API returns it; csv: "
            "flattened columns (see docs/api.md, Export)",
        ),
    ] = "jsonl",
) -> StreamingResponse:
    """Stream every result of the job, reading the store a page at a time (constant memory
    whatever the job's size). A store failure mid-stream cuts the response short."""
    export = await exports.all_results(job_id, caller)
    if export_format == "csv":
        chunks = csv_chunks(export.job, export.pages)
    else:
        chunks = jsonl_chunks(export.pages)
    disposition = f'attachment; filename="{filename(export.job.id, export_format)}"'
    return StreamingResponse(
        chunks,
        media_type=MEDIA_TYPES[export_format],
        headers={"Content-Disposition": disposition},
    )


@router.get(
    "/{job_id:job_id}/files/{task_id}/{name}",
    response_class=Response,
    responses={
        **ERRORS,
        200: {
            "description": "The file: a screenshot (PNG or JPEG), or a page printed to PDF",
            "content": {t: {} for t in ("image/png", "image/jpeg", "application/pdf")},
        },
    },
)
async def job_file(
    job_id: JobId,
    task_id: Annotated[str, Path(pattern="^[A-Za-z0-9_-]{1,128}$", description="The task's id")],
    name: Annotated[
        str, Path(pattern=f"^{FILE_NAME.pattern}$", description="The file's name, as its URL")
    ],
    files: FilesDep,
    caller: CallerDep,
) -> Response:
    """A file a page of the job made in the browser (its screenshot), as its result's URL
    names it: the job's tenant's only, and only for the job's retention."""
    found = await files.file(job_id, task_id, name, caller)
    return Response(
        found.body,
        media_type=found.content_type,
        headers={"Cache-Control": "private, max-age=3600", "X-Content-Type-Options": "nosniff"},
    )


@router.delete("/{job_id:job_id}", status_code=204, response_class=Response, responses=ERRORS)
async def delete_job(job_id: JobId, jobs: JobsDep, caller: CallerDep) -> Response:
    """Delete a finished (completed or cancelled) job and all its results; 409 while it runs.
    Jobs are otherwise deleted when their retention ends (``options.retention_days``)."""
    await jobs.delete(job_id, caller)
    return Response(status_code=204)


@router.get("/{job_id:job_id}/webhooks", response_model=WebhookDeliveries, responses=ERRORS)
async def webhook_deliveries(job_id: JobId, jobs: JobsDep, caller: CallerDep) -> WebhookDeliveries:
    """The job's webhook events (job.completed, job.failed, job.cancelled) and how their
    delivery went: attempts, the receiver's last status, delivered or failed."""
    deliveries = await jobs.webhook_deliveries(job_id, caller)
    return WebhookDeliveries(deliveries=[WebhookDeliveryView.of(d) for d in deliveries])


@router.post("/{job_id:job_id}:retry", response_model=Replayed, responses=ERRORS)
async def retry_job(
    job_id: JobId,
    recovery: RecoveryDep,
    caller: CallerDep,
    status: Annotated[RetryStatus, Query(description="Which finished tasks to run again")] = (
        "dead_lettered"
    ),
) -> Replayed:
    """Run the job's failed or dead-lettered tasks again: they go back to ``queued`` with fresh
    attempts, the job runs again (and completes again); a second retry replays nothing new."""
    replayed = await recovery.retry_job(job_id, TaskStatus(status), caller)
    return Replayed(replayed=replayed)


@router.post("/{job_id:job_id}:cancel", response_model=JobDetail, responses=ERRORS)
async def cancel_job(job_id: JobId, jobs: JobsDep, caller: CallerDep) -> JobDetail:
    """Cancel: tasks not yet started are never fetched; the job ends ``cancelled``."""
    return JobDetail.of_view(await jobs.cancel(job_id, caller))
