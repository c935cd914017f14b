"""The job a user submits: validated at the API edge, stored with the job, read by the worker."""

from __future__ import annotations

from typing import TYPE_CHECKING, Annotated, Any, Literal, Self

from pydantic import BaseModel, ConfigDict, Field, field_validator, model_validator

from scrapejobs_shared.domain.crawl_spec import CrawlSpec
from scrapejobs_shared.domain.lanes import RENDER_LANE
from scrapejobs_shared.domain.webhook_spec import WebhookSpec
from scrapejobs_shared.extraction.field_types import (
    FORBIDDEN_HEADERS,
    JSON_INT,
    LABEL_KEYS,
    MAX_URLS,
    HttpUrl,
    LabelKey,
    LabelValue,
    check_headers,
    headers_schema,
)
from scrapejobs_shared.extraction.formats import FORMATS, FormatChoice, RequestFormat, items_any_of
from scrapejobs_shared.extraction.spec import (
    MAX_FIELDS,
    ONLY_FIELD_NAMES,
    Fields,
    check_field_names,
    check_format_names,
)
from scrapejobs_shared.options import OPTIONS, RENDER
from scrapejobs_shared.pipeline.spec import (
    AT_MOST_ONE_AI_STAGE,
    MAX_STAGES,
    Pipeline,
    RequestPipeline,
    Stage,
    pipeline_from_stored,
    pipeline_to_json,
)

Priority = Literal["high", "normal", "low"]  # lanes of messaging.topology.LANES


class JobOptionsBase(BaseModel):
    # strict: what the OpenAPI document says is what is accepted (0 is not false, "5" is not 5)
    model_config = ConfigDict(extra="forbid", strict=True)

    timeout_s: float = Field(default=30.0, gt=0, le=50, description="Per-fetch overall deadline")
    headers: dict[str, str] = Field(
        default_factory=dict,
        max_length=50,
        description="Extra request headers",
        json_schema_extra=headers_schema(FORBIDDEN_HEADERS),
    )
    max_attempts: Annotated[int, Field(ge=1, le=100), JSON_INT] | None = Field(
        default=None,
        description="Give up after this many fetch attempts (the subscription's dead-letter "
        "policy applies when unset)",
    )
    formats: list[RequestFormat] = Field(
        default_factory=list,
        max_length=20,
        description="Built-in extras to return: "
        + "; ".join(f"{f.name} ({f.description})" for f in FORMATS)
        + '. A format taking options is an object: {"type": its name, ...its options}',
        json_schema_extra=items_any_of,
    )
    retention_days: Annotated[int, Field(ge=1, le=3650), JSON_INT] | None = Field(
        default=None,
        description="Keep the job and its results this many days (default: the deployment's, "
        "30); an expired job is gone from the API at once and deleted by Firestore TTL",
    )

    @field_validator("headers")
    @classmethod
    def _headers_allowed(cls, value: dict[str, str]) -> dict[str, str]:
        return check_headers(value, FORBIDDEN_HEADERS)


if TYPE_CHECKING:
    JobOptions = JobOptionsBase
else:  # with the option families' fields (scrapejobs_shared/options)
    JobOptions = OPTIONS.native_model(JobOptionsBase, "options", "JobOptions")


class PageRequest(BaseModel):
    """What a job and a scrape ask of each page: fields, options, stages, labels."""

    extract: Fields = Field(
        default_factory=dict,
        max_length=MAX_FIELDS,
        description="Field name → selector spec",
        json_schema_extra=ONLY_FIELD_NAMES,
    )
    options: JobOptions = Field(default_factory=JobOptions)
    pipeline: RequestPipeline = Field(
        default_factory=list,
        max_length=MAX_STAGES,
        description="Post-processing stages applied in order to each result's data after "
        "extraction: each an object with one key, 'clean', 'validate', 'transform' or 'ai' "
        "(at most one 'ai' stage)",
        json_schema_extra=AT_MOST_ONE_AI_STAGE,
    )
    labels: dict[LabelKey, LabelValue] = Field(
        default_factory=dict,
        max_length=64,
        description="Free-form string labels (keys may not start with '__')",
        json_schema_extra=LABEL_KEYS,
    )

    @model_validator(mode="after")
    def _formats(self) -> Self:
        check_format_names(self.extract, self.options.formats)
        self.pipeline = with_format_stages(self.options.formats, self.pipeline)
        return self

    @field_validator("extract")
    @classmethod
    def _field_names(cls, value: Fields) -> Fields:
        return check_field_names(value)


SearchedSource = Literal["web", "news"]  # what a search target's results are: pages


def _web_results() -> list[SearchedSource]:
    return ["web"]


class SearchTarget(BaseModel):
    """A job's pages found by a search (the deployment's provider, SCRAPEJOBS_SEARXNG_URL):
    its results become the job's URLs when it is submitted."""

    model_config = ConfigDict(extra="forbid", strict=True)

    query: str = Field(min_length=1, max_length=500, description="What to search for")
    limit: int = Field(default=5, ge=1, le=100, description="Results of each source at most")
    sources: list[SearchedSource] = Field(
        default_factory=_web_results, min_length=1, max_length=2, description="web, news"
    )


class JobRequest(PageRequest):
    """Body of ``POST /v1/jobs``."""

    model_config = ConfigDict(
        extra="forbid",
        strict=True,
        # what _exactly_one_target enforces, said in the OpenAPI document
        json_schema_extra={
            "oneOf": [
                {"required": [name], "properties": {name: {"type": kind}}}
                for name, kind in (
                    ("url", "string"),
                    ("urls", "array"),
                    ("crawl", "object"),
                    ("search", "object"),
                )
            ]
        },
    )

    url: HttpUrl | None = Field(default=None, description="A single URL to scrape")
    urls: list[HttpUrl] | None = Field(
        default=None, min_length=1, max_length=MAX_URLS, description="1 to 10,000 URLs"
    )
    crawl: CrawlSpec | None = Field(default=None, description="Crawl from a start URL")
    search: SearchTarget | None = Field(
        default=None,
        description="The pages a search finds (the job's URLs once submitted: answered in "
        "its tasks)",
    )
    webhook: WebhookSpec | None = Field(
        default=None, description="POST the job's events here, signed (Standard Webhooks)"
    )
    priority: Priority = Field(
        default="normal",
        description="The job's lane: each lane has its own topic and push subscription, so a "
        "backlog of low-priority work never waits in front of a high-priority job (per-host "
        "politeness still holds across lanes)",
    )

    @model_validator(mode="after")
    def _exactly_one_target(self) -> JobRequest:
        targets = (self.url, self.urls, self.crawl, self.search)
        if sum(target is not None for target in targets) != 1:
            raise ValueError("exactly one of 'url', 'urls', 'crawl' or 'search' is required")
        return self

    def lane(self) -> str:
        return job_lane(self.options, self.priority)

    def most_pages(self) -> int:
        """The most pages the job may fetch: its URLs, or its crawl's page limit."""
        if self.crawl is not None:
            return self.crawl.max_pages
        if self.search is not None:
            return self.search.limit * len(set(self.search.sources))
        return len(self.target_urls())

    def target_urls(self) -> list[str]:
        """The URLs of the tasks created at submission (a crawl starts with one)."""
        if self.crawl is not None:
            return [self.crawl.start_url]
        return [self.url] if self.url is not None else list(self.urls or [])


MAX_SCRAPE_TIMEOUT_S = 300.0
DEFAULT_SCRAPE_TIMEOUT_S = 30.0


class ScrapeRequestBase(PageRequest):
    """Body of ``POST /v1/scrape``: one URL, answered with its result (a one-URL job)."""

    model_config = ConfigDict(extra="forbid", strict=True)

    url: HttpUrl = Field(description="The URL to scrape")
    priority: Priority = Field(default="normal", description="The job's lane")
    timeout_s: float = Field(
        default=DEFAULT_SCRAPE_TIMEOUT_S,
        gt=0,
        le=MAX_SCRAPE_TIMEOUT_S,
        description="How long to wait for the result; past it the answer is a 504 naming the "
        "job, which goes on and stays queryable",
    )

    def job_request(self) -> JobRequest:
        """The one-URL job this scrape runs as."""
        return JobRequest.model_validate(
            {
                "url": self.url,
                "extract": self.extract,
                "options": self.options,
                "priority": self.priority,
                "pipeline": self.pipeline,
                "labels": self.labels,
            },
            strict=False,
        )


if TYPE_CHECKING:
    ScrapeRequest = ScrapeRequestBase
else:  # with the option families' fields (scrapejobs_shared/options)
    ScrapeRequest = OPTIONS.native_model(ScrapeRequestBase, "scrape", "ScrapeRequest")


def with_format_stages(formats: list[FormatChoice], pipeline: Pipeline) -> Pipeline:
    """``pipeline`` ending with the stage of a format a stage answers (``summary``), unless it
    holds that stage already (a stored request validated again); ``ValueError`` when it holds
    another ``ai`` stage, or two such formats are asked for: a job has at most one."""
    wanted = FORMATS.stages(formats)
    if not wanted:
        return pipeline
    stages = [Stage.model_validate({"ai": f.stage}) for f in wanted]
    present = [stage for stage in pipeline if stage.name == "ai"]
    if len(stages) == 1 and present == stages:
        return pipeline
    if present or len(stages) > 1:
        names = [f.name for f in wanted]
        raise ValueError(
            f"the {', '.join(names)} format{'s' if len(names) > 1 else ''} asks the language "
            "model through an 'ai' stage, and a job has at most one: ask for it alone, or put "
            "what you need in your own 'ai' stage's schema"
        )
    return [*pipeline, *stages]


def job_lane(options: JobOptions, priority: Priority) -> str:
    """A job's lane: a rendered job's the render lane (its renderer's), the others their
    priority's (their documents' URLs the documents lane: delivery/url_lanes.py)."""
    return RENDER_LANE if RENDER.of(options) is not None else priority


class JobSpec(BaseModel):
    """What the worker needs to process any task of a job (stored on the job document)."""

    model_config = ConfigDict(extra="ignore")

    extract: Fields = Field(default_factory=dict)
    options: JobOptions = Field(default_factory=JobOptions)
    crawl: CrawlSpec | None = None
    pipeline: Pipeline = Field(default_factory=list)
    priority: Priority = "normal"
    webhook: WebhookSpec | None = None
    # a monitor check's job (not a request field): its pages' validators are kept, and a page
    # that carries some and did not change ends unchanged (page_validators.py)
    conditional: bool = False

    @field_validator("pipeline", mode="before")
    @classmethod
    def _stored_pipeline(cls, value: Any) -> Any:
        return pipeline_from_stored(value)

    @classmethod
    def from_request(cls, request: JobRequest, conditional: bool = False) -> JobSpec:
        return cls(
            extract=request.extract,
            options=request.options,
            crawl=request.crawl,
            pipeline=request.pipeline,
            priority=request.priority,
            webhook=request.webhook,
            conditional=conditional,
        )

    def lane(self) -> str:
        return job_lane(self.options, self.priority)

    def to_document(self) -> dict[str, Any]:
        """The spec as stored on the job; the pipeline as one JSON string (a JSON Schema may
        hold what a Firestore map cannot), left out when empty."""
        document = self.model_dump(
            mode="json", exclude_none=True, exclude={"pipeline", "conditional"}
        )
        if self.conditional:
            document["conditional"] = True
        if self.pipeline:
            document["pipeline"] = pipeline_to_json(self.pipeline)
        return document
