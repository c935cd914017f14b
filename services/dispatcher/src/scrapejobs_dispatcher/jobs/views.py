"""JSON shapes of the REST API (also the OpenAPI schema at /docs)."""

from __future__ import annotations

from dataclasses import asdict
from datetime import datetime
from typing import Any, Literal, Self

from pydantic import AliasPath, BaseModel, ConfigDict, Field, field_validator

from scrapejobs_dispatcher.edge.record_view import RecordView
from scrapejobs_dispatcher.jobs.job_service import JobView
from scrapejobs_shared.domain.jobspec import Priority
from scrapejobs_shared.domain.model_usage import ModelUsage
from scrapejobs_shared.domain.records import JobRecord, TaskRecord
from scrapejobs_shared.domain.statuses import JobStatus, TaskStatus
from scrapejobs_shared.domain.tenancy import TENANT_PATTERN
from scrapejobs_shared.politeness.host_key import HOST_PATTERN

HOST_FILTER = (
    "The host, as a URL on it (scheme://host[:port], any path) or as its key (scheme~host~port)"
)


class JobSummary(RecordView):
    id: str
    status: JobStatus
    created_at: datetime
    updated_at: datetime
    labels: dict[str, str]
    kind: str
    tenant: str = Field(description="The tenant (team) the job belongs to")
    priority: Priority = Field(
        validation_alias=AliasPath("spec", "priority"),
        description="Its priority (the lane of its tasks unless rendered)",
    )
    rendered: bool = Field(
        default=False,
        validation_alias=AliasPath("spec", "options", "render"),
        description="Its pages are rendered in headless Chromium (options.render); its tasks "
        "travel in the render lane",
    )

    @field_validator("rendered", mode="before")
    @classmethod
    def _render_asked(cls, render: object) -> bool:
        return render is not None and render is not False


class JobProgress(RecordView):
    done: int = Field(description="Tasks finished (any terminal status)")
    total: int = Field(description="Tasks so far (a crawl's grows)")
    percent: float
    rate_per_s: float | None = Field(
        description="Tasks finished per second over a sliding window (rich's): the last 30 s "
        "of reads of the job; the average since start until the reads span 2 s"
    )
    eta_s: float | None = Field(
        description="Seconds to completion; null until there is enough data, 0 when finished"
    )
    estimated_completion: datetime | None


class AiUsage(BaseModel):
    """What the job's ai stage cost, from the provider's own usage figures, counted once per
    finished task."""

    calls: int = Field(description="Requests the model answered (a repair is one more)")
    cached: int = Field(description="Answers reused instead of asked for (not paid again)")
    input_tokens: int
    output_tokens: int
    cost: float | None = Field(
        default=None,
        description="What the tokens cost at SCRAPEJOBS_AI_PRICE_PER_MTOK_IN/OUT (null when "
        "neither price is set)",
    )

    @classmethod
    def of(cls, usage: ModelUsage, cost: float | None) -> AiUsage:
        return cls(**asdict(usage), cost=cost)


class JobDetail(JobSummary):
    total: int = Field(description="Number of tasks; always the sum of counts")
    counts: dict[TaskStatus, int] = Field(description="Tasks per status")
    started_at: datetime | None = Field(description="When a worker first took one of its tasks")
    finished_at: datetime | None = Field(description="When it completed or was cancelled")
    progress: JobProgress
    ai_usage: AiUsage | None = Field(
        default=None, description="The ai stage's usage (jobs with an ai stage, once it ran)"
    )

    @classmethod
    def of_view(cls, view: JobView) -> JobDetail:
        return cls(
            **dict(JobSummary.of(view.job)),
            total=view.total,
            counts=view.counts,
            started_at=view.job.started_at,
            finished_at=view.job.finished_at,
            progress=JobProgress.of(view.progress),
            ai_usage=AiUsage.of(usage, view.ai_cost) if (usage := view.job.ai_usage) else None,
        )


class WebhookDeliveryView(RecordView):
    event_id: str = Field(description="The webhook-id header of every attempt")
    type: str
    url: str
    state: Literal["pending", "delivered", "failed"]
    attempts: int
    last_status: int | None = Field(description="The receiver's last HTTP status")
    last_error: str | None
    created_at: datetime
    updated_at: datetime
    delivered_at: datetime | None


class WebhookDeliveries(BaseModel):
    deliveries: list[WebhookDeliveryView] = Field(description="Newest first")


class JobList(BaseModel):
    jobs: list[JobSummary]
    next_page_token: str | None


class TaskResult(RecordView):
    id: str
    url: str
    status: TaskStatus
    http_status: int | None
    data: dict[str, Any] | None
    error: str | None
    attempts: int
    fetched_at: datetime | None
    elapsed_ms: int | None
    rendered: bool = Field(default=False, description="The page was rendered in headless Chromium")
    rendered_ms: int | None = Field(
        default=None, description="How long rendering took (part of elapsed_ms)"
    )
    replays: int = Field(default=0, description="How often the task was replayed")
    tls_unverified: bool = Field(
        default=False,
        description="The site's TLS certificate failed verification and the page was fetched "
        "anyway (options.verify_tls false)",
    )
    truncated_fields: list[str] = Field(
        default_factory=list,
        description="Fields cut to keep the result under the store's size limit "
        "('$body': the page itself exceeded the fetch byte cap)",
    )
    field_errors: dict[str, str] | None = Field(
        default=None, description="Per-field extraction problems (the field holds its default)"
    )

    @classmethod
    def of(cls, record: object) -> Self:
        result = cls.model_validate(record)
        result.rendered = result.rendered_ms is not None
        return result


class ResultPage(BaseModel):
    results: list[TaskResult]
    next_page_token: str | None


class DeadLetter(RecordView):
    job_id: str
    task_id: str = Field(validation_alias="id")
    url: str
    error: str | None = Field(description="The last error its attempts recorded")
    attempts: int
    replays: int = Field(description="How often it was replayed before")
    dead_lettered_at: datetime = Field(validation_alias="updated_at")


class DeadLetterPage(BaseModel):
    dead_letters: list[DeadLetter]
    next_page_token: str | None


class ReplayFilters(BaseModel):
    """Which dead letters to replay (all of them when no filter is given), at most ``limit``."""

    model_config = ConfigDict(extra="forbid")

    job_id: str | None = Field(
        default=None, min_length=1, max_length=64, pattern=r"^[A-Za-z0-9_\-]+$"
    )
    host: str | None = Field(
        default=None, min_length=1, max_length=2048, pattern=HOST_PATTERN, description=HOST_FILTER
    )
    tenant: str | None = Field(
        default=None,
        pattern=TENANT_PATTERN,
        description="Admin keys: only this tenant's (default: every tenant's). A member "
        "replays only its own tenant's.",
    )
    limit: int = Field(default=500, ge=1, le=500)

    @field_validator("limit", mode="before")
    @classmethod
    def _a_number_not_a_boolean(cls, value: object) -> object:
        """JSON's ``true`` is not the integer 1 (``250.0`` is an integer, as JSON Schema says)."""
        if isinstance(value, bool | str):
            raise ValueError("limit must be an integer")
        return value


class Replayed(BaseModel):
    replayed: int = Field(description="Tasks put back to queued and published again")


class ErrorBody(BaseModel):
    code: str
    message: str
    field: str | None = None


class ErrorResponse(BaseModel):
    error: ErrorBody


class UnavailableBody(ErrorBody):
    dependency: str = Field(description="What did not answer in time: firestore or pubsub")
    job_id: str | None = Field(
        default=None, description="A submission: the id of the job it was creating"
    )
    stored: bool | None = Field(
        default=None,
        description="A submission: true, the job is stored and runs once the dependency is "
        "back; false, it was not stored; null, unknown (retry with the same Idempotency-Key)",
    )


class UnavailableResponse(BaseModel):
    error: UnavailableBody


UNAVAILABLE: dict[int | str, dict[str, Any]] = {
    503: {
        "model": UnavailableResponse,
        "description": "dependency_unavailable: Firestore or Pub/Sub did not answer within its "
        "deadline; nothing was lost, retry after Retry-After",
        "headers": {
            "Retry-After": {"description": "Seconds to wait", "schema": {"type": "integer"}}
        },
    }
}


class ScrapeResponse(BaseModel):
    job_id: str
    status: JobStatus = Field(description="The one-URL job's status: completed or cancelled")
    result: TaskResult | None = Field(
        description="The page's result (its status says whether it succeeded); null only when "
        "the job was cancelled before the page was fetched"
    )

    @classmethod
    def of(cls, job: JobRecord, result: TaskRecord | None) -> ScrapeResponse:
        return cls(
            job_id=job.id,
            status=job.status,
            result=TaskResult.of(result) if result is not None else None,
        )


class ScrapeAccepted(BaseModel):
    """``202``: no result within the wait; the job goes on and stays queryable."""

    job_id: str = Field(description="The job, which goes on: GET /v1/jobs/{job_id}")
    message: str

    @classmethod
    def of(cls, job_id: str, timeout_s: float) -> ScrapeAccepted:
        message = (
            f"no result within {timeout_s:g} s; the job goes on: GET /v1/jobs/{job_id} "
            "and its results"
        )
        return cls(job_id=job_id, message=message)
