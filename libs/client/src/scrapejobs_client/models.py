"""What the scrapejobs API answers, as pydantic models.

They mirror the dispatcher's OpenAPI schemas (``scrapejobs_dispatcher.jobs.views`` and the routes),
but are lenient on purpose: unknown fields are kept (``extra="allow"``, reachable through
``model_extra`` and in ``model_dump()``), and statuses are plain strings, so a newer server
that adds a field or a status does not break an older client.
"""

from __future__ import annotations

from datetime import datetime
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field

JOB_STATUSES = ("queued", "running", "completed", "cancelled")
TASK_STATUSES = (
    "queued",
    "running",
    "processing",
    "succeeded",
    "failed",
    "dead_lettered",
    "cancelled",
)
TERMINAL_JOB_STATUSES = frozenset({"completed", "cancelled"})
OPEN_TASK_STATUSES = ("queued", "running", "processing")
UNSUCCESSFUL_TASK_STATUSES = ("failed", "dead_lettered")

Priority = Literal["high", "normal", "low"]
RetryStatus = Literal["dead_lettered", "failed"]
StatsWindow = Literal["5m", "1h", "24h"]
ExportFormat = Literal["jsonl", "csv"]


class ApiModel(BaseModel):
    """Base of every response model: extra fields are kept, never refused."""

    model_config = ConfigDict(extra="allow")


# --- jobs -------------------------------------------------------------------------------------


class JobProgress(ApiModel):
    done: int
    total: int
    percent: float
    rate_per_s: float | None = None
    eta_s: float | None = None
    estimated_completion: datetime | None = None


class JobSummary(ApiModel):
    """A job as ``GET /v1/jobs`` lists it."""

    id: str
    status: str
    created_at: datetime
    updated_at: datetime
    labels: dict[str, str] = Field(default_factory=dict)
    kind: str | None = None
    tenant: str | None = None  # the team it belongs to
    priority: str | None = None  # its lane: high, normal or low
    rendered: bool = False  # its pages are rendered in headless Chromium


class AiUsage(ApiModel):
    """What a job's ai stage cost (the provider's figures; cached answers were not paid)."""

    calls: int = 0
    cached: int = 0
    input_tokens: int = 0
    output_tokens: int = 0
    cost: float | None = None  # at the service's configured prices (None: none set)


class Job(JobSummary):
    """A job as ``GET /v1/jobs/{id}`` (and submit, cancel) return it."""

    total: int
    counts: dict[str, int] = Field(default_factory=dict)
    started_at: datetime | None = None
    finished_at: datetime | None = None
    progress: JobProgress | None = None
    ai_usage: AiUsage | None = None

    @property
    def open_tasks(self) -> int:
        return sum(self.counts.get(status, 0) for status in OPEN_TASK_STATUSES)

    @property
    def finished(self) -> bool:
        """The job ended (completed or cancelled) and none of its tasks is still open."""
        return self.status in TERMINAL_JOB_STATUSES and self.open_tasks == 0

    @property
    def unsuccessful(self) -> int:
        """Tasks that ended failed or dead-lettered."""
        return sum(self.counts.get(status, 0) for status in UNSUCCESSFUL_TASK_STATUSES)


class Page(ApiModel):
    """One page of a listing; ``next_page_token`` is None on the last."""

    next_page_token: str | None = None


class JobPage(Page):
    jobs: list[JobSummary]


class TaskResult(ApiModel):
    id: str
    url: str
    status: str
    http_status: int | None = None
    data: dict[str, Any] | None = None
    error: str | None = None
    attempts: int = 0
    replays: int = 0
    fetched_at: datetime | None = None
    elapsed_ms: int | None = None
    rendered: bool = False
    rendered_ms: int | None = None  # how long rendering took (part of elapsed_ms)
    tls_unverified: bool = False  # the certificate failed and options.verify_tls let it pass
    truncated_fields: list[str] = Field(default_factory=list)
    field_errors: dict[str, str] | None = None


class Scraped(ApiModel):
    """``POST /v1/scrape``'s answer: the one-URL job and its page's result."""

    job_id: str
    status: str
    result: TaskResult | None = None


class ResultPage(Page):
    results: list[TaskResult]


class Replayed(ApiModel):
    replayed: int


# --- keys (admin) -----------------------------------------------------------------------------


class ApiKey(ApiModel):
    """A key as ``GET /v1/keys`` lists it (never the key itself)."""

    id: str
    name: str = ""
    tenant: str
    role: str  # member, admin or scheduler
    created_at: datetime
    last_used_at: datetime | None = None


class CreatedApiKey(ApiKey):
    """``POST /v1/keys``: the key, shown this once."""

    key: str


# --- tenants: quotas and usage ----------------------------------------------------------------


class Quota(ApiModel):
    pages_per_day: int = 0  # 0: no limit
    pages_in_flight: int = 0


class TenantQuota(ApiModel):
    tenant: str
    quota: Quota
    own_quota: bool = False


class Tenants(ApiModel):
    """``GET /v1/tenants`` (admin): the default quota, the tenants with their own."""

    defaults: Quota
    tenants: list[TenantQuota] = Field(default_factory=list)


class TenantProxy(ApiModel):
    proxy: str  # its label, scheme://host:port: never a credential
    country: str | None = None
    tier: str = "basic"


class TenantProxies(ApiModel):
    """``/v1/tenants/{tenant}/proxies`` (admin): the proxies the tenant's jobs go through (its
    own pool, else the deployment's)."""

    tenant: str
    own_pool: bool = False
    proxies: list[TenantProxy] = Field(default_factory=list)


class TenantUsage(ApiModel):
    """A tenant's day so far (UTC) against its quota."""

    tenant: str
    pages_today: int
    pages_in_flight: int
    quota: Quota
    own_quota: bool = False
    ai_tokens: int = 0
    ai_cost: float | None = None
    screenshots: int = 0
    proxied_pages: dict[str, int] = Field(default_factory=dict)  # today, by the proxy's tier
    searches: int = 0  # asked today
    search_credits: int = 0  # what their results cost today
    ocr_pages: int = 0  # documents' pages read by OCR today (their weight is in pages_today)


# --- dead letters -----------------------------------------------------------------------------


class DeadLetter(ApiModel):
    job_id: str
    task_id: str
    url: str
    error: str | None = None
    attempts: int = 0
    replays: int = 0
    dead_lettered_at: datetime


class DeadLetterPage(Page):
    dead_letters: list[DeadLetter]


# --- hosts ------------------------------------------------------------------------------------


class HostState(ApiModel):
    host: str
    paused: bool
    circuit_open_until: datetime | None = None
    next_request_at: datetime | None = None
    consecutive_failures: int = 0
    in_flight: int = 0


# --- workers (GET /v1/workers) ---------------------------------------------------------------


class WorkerInFlight(ApiModel):
    batches: int = 0
    pages: int = 0


class WorkerProxy(ApiModel):
    proxy: str  # scheme://host:port, never its credentials
    served: int = 0
    failed: int = 0


class Worker(ApiModel):
    id: str
    revision: str
    started_at: datetime
    last_seen: datetime
    batches: int = 0
    pages: int = 0
    in_flight: WorkerInFlight = Field(default_factory=WorkerInFlight)
    proxies: list[WorkerProxy] = Field(default_factory=list)


# --- monitoring (GET /v1/stats, /v1/stats/history, /v1/health) --------------------------------


class TaskTotals(ApiModel):
    queued: int = 0
    running: int = 0
    processing: int = 0
    succeeded: int = 0
    failed: int = 0
    dead_lettered: int = 0
    cancelled: int = 0
    # of the failed: challenge, login_wall, empty_content (pages that were not the page)
    unusable: dict[str, int] = Field(default_factory=dict)


class ProcessingTimes(ApiModel):
    avg_ms: float | None = None
    p50_ms: float | None = None
    p95_ms: float | None = None


class FetchTimes(ApiModel):
    p95_ms: float | None = None


class PausedHost(ApiModel):
    host: str
    until: str
    reason: str


class Stats(ApiModel):
    window: str
    since: datetime | None = None  # the span the window covers (whole slots)
    generated_at: datetime | None = None
    partial: bool = False  # more unfinished jobs than one read sums: job counts are lower bounds
    tasks: TaskTotals = Field(default_factory=TaskTotals)
    jobs: dict[str, int] = Field(default_factory=dict)
    throughput_per_s: float = 0.0
    processing: ProcessingTimes = Field(default_factory=ProcessingTimes)
    fetch: FetchTimes = Field(default_factory=FetchTimes)
    error_rate: float | None = None
    oldest_queued_age_s: float | None = None
    paused_hosts: list[PausedHost] = Field(default_factory=list)
    ai: AiUsage = Field(default_factory=AiUsage)  # the window's ai stages
    proxied_pages: dict[str, int] = Field(default_factory=dict)  # by the proxy's tier
    proxies: list[WorkerProxy] = Field(default_factory=list)  # admins: each proxy, live workers


class HourStats(ApiModel):
    hour: str
    processed: int = 0
    succeeded: int = 0
    failed: int = 0
    dead_lettered: int = 0
    success_rate: float | None = None
    avg_ms: float | None = None
    p95_ms: float | None = None
    throughput_per_s: float | None = None


class StatsHistory(ApiModel):
    history: list[HourStats]


class Health(ApiModel):
    """``HEALTHY``, ``DEGRADED`` or ``UNHEALTHY`` (the API answers the last with a 503)."""

    status: str
    reasons: list[str] = Field(default_factory=list)
    checks: dict[str, dict[str, Any]] = Field(default_factory=dict)

    @property
    def healthy(self) -> bool:
        return self.status == "HEALTHY"


# --- maintenance ------------------------------------------------------------------------------


class Republished(ApiModel):
    jobs: int
    tasks: int


class ReconcileReport(ApiModel):
    batches: int
    tasks: int
    skipped: int = 0
    webhooks: int = 0  # webhook events queued again (never attempted)


# --- requests ---------------------------------------------------------------------------------


class Webhook(BaseModel):
    """Where the API posts a job's events (``submit(webhook=...)``)."""

    model_config = ConfigDict(extra="forbid")

    url: str
    events: list[str] | None = None
    headers: dict[str, str] | None = None
    secret: str | None = None
    metadata: dict[str, str] | None = None  # echoed in every event's body
    shape: Literal["standard", "firecrawl"] | None = None  # the service's default: standard


# --- search (Firecrawl's /v2/search) -----------------------------------------------------------


class SearchResults(ApiModel):
    """``POST /v2/search``: results by source (web, news, images), each a Firecrawl item
    (url, title, description...; a scraped one with its Document's fields)."""

    success: bool = True
    data: dict[str, list[dict[str, Any]]] = Field(default_factory=dict)
    warning: str | None = None
    credits_used: int = Field(default=0, alias="creditsUsed")
