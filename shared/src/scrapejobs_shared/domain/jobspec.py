"""The job a user submits: validated at the API edge, stored with the job, read by the worker."""

from __future__ import annotations

import base64
import binascii
import re
from typing import Annotated, Any, Literal
from urllib.parse import urlsplit

from cssselect import GenericTranslator, SelectorError
from pydantic import (
    AfterValidator,
    BaseModel,
    BeforeValidator,
    ConfigDict,
    Field,
    StringConstraints,
    WithJsonSchema,
    field_validator,
    model_validator,
)
from pydantic.config import JsonDict

from scrapejobs_shared.extraction.content_scope import ContentScope
from scrapejobs_shared.extraction.spec import (
    MAX_FIELDS,
    ONLY_FIELD_NAMES,
    Fields,
    Format,
    check_field_names,
    check_format_names,
)
from scrapejobs_shared.messaging.topology import RENDER_LANE
from scrapejobs_shared.pipeline.spec import (
    AT_MOST_ONE_AI_STAGE,
    MAX_STAGES,
    Pipeline,
    RequestPipeline,
    pipeline_from_stored,
    pipeline_to_json,
)

MAX_URLS = 10_000
Priority = Literal["high", "normal", "low"]  # lanes of messaging.topology.LANES
MAX_URL_LENGTH = 2048
# Headers a job may not set: they could address the metadata server, smuggle requests, or
# defeat the fetcher's own body decoding and limits (refused at submit and again at fetch).
FORBIDDEN_HEADERS = frozenset(
    {
        "host",
        "metadata-flavor",
        "x-google-metadata-request",
        "content-length",
        "transfer-encoding",
        "connection",
        "keep-alive",
        "proxy-connection",
        "proxy-authorization",
        "te",
        "trailer",
        "upgrade",
        "expect",
        "accept-encoding",
    }
)


def check_url(url: str) -> str:
    """An absolute http(s) URL with a host and no credentials."""
    if len(url) > MAX_URL_LENGTH:
        raise ValueError(f"URL longer than {MAX_URL_LENGTH} characters")
    parts = urlsplit(url)
    if parts.scheme not in ("http", "https"):
        raise ValueError(f"URL scheme must be http or https, got {parts.scheme or 'none'!r}")
    if not parts.hostname:
        raise ValueError("URL has no host")
    if parts.username is not None or parts.password is not None:
        raise ValueError("URL must not contain credentials")
    try:
        parts.port  # noqa: B018 - raises on an invalid port
    except ValueError as exc:
        raise ValueError(f"invalid port: {exc}") from None
    return url


# What check_url accepts, for the OpenAPI document (a subset of it: IPv6 literals and ports
# above 9999 are accepted too).
URL_SCHEMA = {
    "type": "string",
    "minLength": 8,
    "maxLength": MAX_URL_LENGTH,
    "pattern": r"^[hH][tT][tT][pP][sS]?://[^\s/?#@:\[\]\\]+(:[0-9]{1,4})?([/?#][^\s]*)?$",
    "description": "An absolute http(s) URL with a host and no credentials",
}
HttpUrl = Annotated[str, AfterValidator(check_url), WithJsonSchema(URL_SCHEMA)]


def _integral(value: Any) -> Any:
    """JSON has one number type: 6.0 is the integer 6 (as JSON Schema says), "6" is not."""
    if isinstance(value, float) and value.is_integer():
        return int(value)
    return value


JSON_INT = BeforeValidator(_integral)  # after the bounds in Annotated[int, Field(...), JSON_INT]
# Firestore refuses map keys of the form __name__ (the job's spec and labels are maps), so no
# key a user names (a label, a header, an extracted field) may start with two underscores.
RESERVED_PREFIX = "__"


def not_reserved(key: str) -> str:
    if key.startswith(RESERVED_PREFIX):
        raise ValueError(f"{key[:64]!r}: names starting with '{RESERVED_PREFIX}' are reserved")
    return key


LabelKey = Annotated[
    str, StringConstraints(min_length=1, max_length=63), AfterValidator(not_reserved)
]
LabelValue = Annotated[str, StringConstraints(max_length=256)]
LABEL_KEYS: JsonDict = {
    "propertyNames": {"minLength": 1, "maxLength": 63, "pattern": f"^(?!{RESERVED_PREFIX})"}
}
HEADER_NAME = re.compile(r"^[!#$%&'*+.^_`|~0-9A-Za-z-]+$")


def headers_schema(forbidden: frozenset[str]) -> JsonDict:
    """What ``check_headers`` accepts, for the OpenAPI document: RFC 9110 token names, none of
    ``forbidden`` (in any case) nor reserved, values on one line."""
    any_case = "|".join(
        "".join(f"[{c.lower()}{c.upper()}]" if c.isalpha() else c for c in name)
        for name in sorted(forbidden)
    )
    return {
        "propertyNames": {
            "pattern": HEADER_NAME.pattern,
            "not": {"pattern": f"^(?:{any_case}|{RESERVED_PREFIX}.*)$"},
        },
        "additionalProperties": {"type": "string", "pattern": r"^[^\r\n]*$"},
    }


BlockedResource = Literal["image", "font", "media", "stylesheet"]
DEFAULT_BLOCKED: tuple[BlockedResource, ...] = ("image", "font", "media")
MAX_RENDER_WAIT_MS = 30_000


class Viewport(BaseModel):
    model_config = ConfigDict(extra="forbid", strict=True)

    width: Annotated[int, Field(ge=320, le=3840), JSON_INT] = 1280
    height: Annotated[int, Field(ge=240, le=2160), JSON_INT] = 800


def check_css_selector(selector: str) -> str:
    """A CSS selector of elements (no ``::text``-style pseudo-elements) that a browser's
    ``querySelector`` would take: checked with cssselect, which parsel uses too."""
    if "::" in selector:
        raise ValueError("wait_for must select elements, not a pseudo-element")
    try:
        GenericTranslator().css_to_xpath(selector)
    except SelectorError as exc:
        raise ValueError(f"invalid CSS selector: {exc}") from None
    return selector


CssSelector = Annotated[
    str, StringConstraints(min_length=1, max_length=500), AfterValidator(check_css_selector)
]


class ContentOptions(BaseModel):
    """Which part of a page the markdown and clean_html formats give."""

    model_config = ConfigDict(extra="forbid", strict=True)

    main_only: bool = Field(
        default=True,
        description="Leave out navigation, asides, forms, the page's header and footer and "
        "consent banners",
    )
    include: list[CssSelector] = Field(
        default_factory=list,
        max_length=20,
        description="CSS selectors: only the elements they match (in document order)",
    )
    exclude: list[CssSelector] = Field(
        default_factory=list, max_length=50, description="CSS selectors of elements left out"
    )

    def scope(self) -> ContentScope:
        return ContentScope(self.main_only, tuple(self.include), tuple(self.exclude))


class RenderOptions(BaseModel):
    """How a page is rendered in headless Chromium before extraction."""

    model_config = ConfigDict(extra="forbid", strict=True)

    wait_for: CssSelector | None = Field(
        default=None,
        description="A CSS selector: extraction waits until an element matches it (within the "
        "job's timeout_s; past it the task fails render_timeout)",
    )
    wait_ms: Annotated[int, Field(ge=0, le=MAX_RENDER_WAIT_MS), JSON_INT] = Field(
        default=0, description="A fixed wait after the page loaded (and wait_for matched)"
    )
    block: list[BlockedResource] = Field(
        default_factory=lambda: list(DEFAULT_BLOCKED),
        max_length=4,
        description="Resource types the browser does not load",
    )
    viewport: Viewport = Field(default_factory=Viewport)


def _render_flag(value: Any) -> Any:
    """``render: true`` renders with the defaults, ``false`` does not render."""
    if value is True:
        return {}
    return None if value is False else value


def _also_boolean(schema: JsonDict) -> None:
    """What ``_render_flag`` accepts, for the OpenAPI document: a boolean as well."""
    any_of = schema.get("anyOf")
    if isinstance(any_of, list):
        any_of.insert(1, {"type": "boolean"})


MAX_CACHE_AGE_S = 172_800  # how long a page cache entry is kept (and the most it is asked for)


class JobOptions(BaseModel):
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
    formats: list[Format] = Field(
        default_factory=list,
        description="Built-in extras to return: metadata, links, images, text, markdown (the "
        "main content), html (the page as served), clean_html (without scripts, styles and, "
        "by default, page chrome)",
    )
    content: ContentOptions = Field(
        default_factory=ContentOptions,
        description="Which part of the page markdown and clean_html give",
    )
    respect_robots: bool = Field(default=True, description="Obey robots.txt (RFC 9309)")
    per_host_concurrency: Annotated[int, Field(ge=1, le=64), JSON_INT] | None = None
    per_host_rps: float | None = Field(default=None, gt=0, le=100)
    render: Annotated[RenderOptions | None, BeforeValidator(_render_flag)] = Field(
        default=None,
        description="Render the page in headless Chromium before extraction: true for the "
        "defaults, or an object (wait_for, wait_ms, block, viewport)",
        json_schema_extra=_also_boolean,
    )
    retention_days: Annotated[int, Field(ge=1, le=3650), JSON_INT] | None = Field(
        default=None,
        description="Keep the job and its results this many days (default: the deployment's, "
        "30); an expired job is gone from the API at once and deleted by Firestore TTL",
    )
    cache_max_age_s: Annotated[int, Field(ge=0, le=MAX_CACHE_AGE_S), JSON_INT] = Field(
        default=0,
        description="Reuse the result of a page fetched this recently (seconds, at most "
        "172,800) by a job asking for the same result (URL, fields, formats, content, headers, "
        "rendering, stages); 0: always fetch. Not for crawls or jobs with an ai stage",
    )
    cache_store: bool = Field(
        default=False,
        description="Keep each page fetched for later jobs' cache_max_age_s (for 2 days)",
    )

    @field_validator("headers")
    @classmethod
    def _headers_allowed(cls, value: dict[str, str]) -> dict[str, str]:
        return check_headers(value, FORBIDDEN_HEADERS)


def check_headers(value: dict[str, str], forbidden: frozenset[str]) -> dict[str, str]:
    for name, header_value in value.items():
        if name.lower() in forbidden:
            raise ValueError(f"header {name!r} may not be set")
        if not HEADER_NAME.match(name) or any(c in header_value for c in "\r\n"):
            raise ValueError(f"invalid header {name!r}")
        not_reserved(name)
    return value


WebhookEventType = Literal[
    "job.started", "task.finished", "job.completed", "job.failed", "job.cancelled"
]
WEBHOOK_EVENTS: tuple[WebhookEventType, ...] = (
    "job.started",
    "task.finished",
    "job.completed",
    "job.failed",
    "job.cancelled",
)
JOB_END_EVENTS: tuple[WebhookEventType, ...] = ("job.completed", "job.failed", "job.cancelled")
WebhookShape = Literal["standard", "firecrawl"]
# what a webhook echoes in every event: a few short strings, as Firecrawl's SDKs type it
WebhookMetadata = Annotated[
    dict[
        Annotated[str, Field(min_length=1, max_length=100), AfterValidator(not_reserved)],
        Annotated[str, Field(max_length=500)],
    ],
    Field(max_length=20),
]
# The signature and the body's type are the sender's (Standard Webhooks, Firecrawl's), never
# the job's.
WEBHOOK_FORBIDDEN_HEADERS = FORBIDDEN_HEADERS | {
    "webhook-id",
    "webhook-timestamp",
    "webhook-signature",
    "x-firecrawl-signature",
    "content-type",
}


class WebhookSpec(BaseModel):
    """Where the job's events are POSTed. ``standard``: signed per Standard Webhooks
    (webhook-id, webhook-timestamp, webhook-signature: v1,<base64 HMAC-SHA256 of
    id.timestamp.body>). ``firecrawl``: the bodies and signature Firecrawl sends (for receivers
    written against Firecrawl's webhooks)."""

    model_config = ConfigDict(extra="forbid", strict=True)

    url: HttpUrl
    events: list[WebhookEventType] = Field(
        default_factory=lambda: list(JOB_END_EVENTS),
        min_length=1,
        max_length=len(WEBHOOK_EVENTS),
        description="job.started (on submission), task.finished (each page that ended "
        "succeeded or failed), job.completed, job.failed (the job ended and every task "
        "failed), job.cancelled. Default: the three job ends",
    )
    headers: dict[str, str] = Field(
        default_factory=dict,
        max_length=20,
        description="Extra request headers (not the signature's)",
        json_schema_extra=headers_schema(WEBHOOK_FORBIDDEN_HEADERS),
    )
    secret: str | None = Field(
        default=None,
        pattern=r"^whsec_(?:[A-Za-z0-9+/]{4}){5,15}(?:[A-Za-z0-9+/]{4}|[A-Za-z0-9+/]{3}=|[A-Za-z0-9+/]{2}==)$",
        description="Signing key, whsec_ + base64 of 16 to 48 random bytes; without one, the "
        "deployment's keys sign",
    )
    metadata: WebhookMetadata = Field(
        default_factory=dict, description="Echoed in every event's body"
    )
    shape: WebhookShape = Field(
        default="standard",
        description="standard: Standard Webhooks; firecrawl: Firecrawl's bodies and its "
        "X-Firecrawl-Signature: sha256=<hex HMAC-SHA256 of the body> (keyed with the secret "
        "as written)",
    )

    def wants(self, event: WebhookEventType) -> bool:
        return event in self.events

    @field_validator("headers")
    @classmethod
    def _headers_allowed(cls, value: dict[str, str]) -> dict[str, str]:
        return check_headers(value, WEBHOOK_FORBIDDEN_HEADERS)

    @field_validator("secret")
    @classmethod
    def _secret_decodes(cls, value: str | None) -> str | None:
        if value is not None:
            try:
                key = base64.b64decode(value.removeprefix("whsec_"), validate=True)
            except binascii.Error:
                raise ValueError("the secret is not base64 after whsec_") from None
            if not 16 <= len(key) <= 48:
                raise ValueError("the secret must hold 16 to 48 bytes")
        return value


class CrawlSpec(BaseModel):
    """Follow links from ``start_url``: every discovered page becomes a task (once per job)."""

    model_config = ConfigDict(extra="forbid", strict=True)

    start_url: HttpUrl
    max_depth: Annotated[int, Field(ge=0, le=20), JSON_INT] = Field(
        default=2, description="Link hops from start_url"
    )
    max_pages: Annotated[int, Field(ge=1, le=MAX_URLS), JSON_INT] = Field(
        default=100, description="Tasks at most"
    )
    include: list[str] = Field(
        default_factory=list, max_length=50, description="Regexes; the URL path must match one"
    )
    exclude: list[str] = Field(
        default_factory=list, max_length=50, description="Regexes; the URL path must match none"
    )
    allow_subdomains: bool = Field(default=False, description="Follow links to subdomains too")
    under_start_path: bool = Field(
        default=False,
        description="Only pages whose path starts with start_url's path (its section of the site)",
    )
    ignore_query: bool = Field(
        default=False,
        description="Pages are followed without their query: URLs differing only in it are "
        "one page",
    )
    sitemap: Literal["skip", "include", "only"] = Field(
        default="skip",
        description="include: the site's sitemaps (/sitemap.xml, those robots.txt names, one "
        "level of index) add their pages (at depth 0, in the crawl's scope); only: those pages "
        "and start_url, no links followed; skip: links only",
    )

    @field_validator("include", "exclude")
    @classmethod
    def _regexes_compile(cls, patterns: list[str]) -> list[str]:
        for index, pattern in enumerate(patterns):
            if len(pattern) > 500:
                raise ValueError(f"pattern {index} is longer than 500 characters")
            try:
                re.compile(pattern)
            except re.error as exc:
                raise ValueError(f"pattern {index} is not a valid regex: {exc}") from None
        return patterns


class JobRequest(BaseModel):
    """Body of ``POST /v1/jobs``."""

    model_config = ConfigDict(
        extra="forbid",
        strict=True,
        # what _exactly_one_target enforces, said in the OpenAPI document
        json_schema_extra={
            "oneOf": [
                {"required": [name], "properties": {name: {"type": kind}}}
                for name, kind in (("url", "string"), ("urls", "array"), ("crawl", "object"))
            ]
        },
    )

    url: HttpUrl | None = Field(default=None, description="A single URL to scrape")
    urls: list[HttpUrl] | None = Field(
        default=None, min_length=1, max_length=MAX_URLS, description="1 to 10,000 URLs"
    )
    crawl: CrawlSpec | None = Field(default=None, description="Crawl from a start URL")
    extract: Fields = Field(
        default_factory=dict,
        max_length=MAX_FIELDS,
        description="Field name → selector spec",
        json_schema_extra=ONLY_FIELD_NAMES,
    )
    options: JobOptions = Field(default_factory=JobOptions)
    webhook: WebhookSpec | None = Field(
        default=None, description="POST the job's events here, signed (Standard Webhooks)"
    )
    priority: Priority = Field(
        default="normal",
        description="The job's lane: each lane has its own topic and push subscription, so a "
        "backlog of low-priority work never waits in front of a high-priority job (per-host "
        "politeness still holds across lanes)",
    )
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
    def _exactly_one_target(self) -> JobRequest:
        if sum(target is not None for target in (self.url, self.urls, self.crawl)) != 1:
            raise ValueError("exactly one of 'url', 'urls' or 'crawl' is required")
        check_format_names(self.extract, self.options.formats)
        return self

    @field_validator("extract")
    @classmethod
    def _field_names(cls, value: Fields) -> Fields:
        return check_field_names(value)

    def lane(self) -> str:
        """The lane its tasks travel in: a rendered job's go to the render lane (served by the
        renderer, so plain jobs never wait behind a browser), the others to their priority's."""
        return RENDER_LANE if self.options.render is not None else self.priority

    def target_urls(self) -> list[str]:
        """The URLs of the tasks created at submission (a crawl starts with one)."""
        if self.crawl is not None:
            return [self.crawl.start_url]
        return [self.url] if self.url is not None else list(self.urls or [])


MAX_SCRAPE_TIMEOUT_S = 300.0
DEFAULT_SCRAPE_TIMEOUT_S = 30.0


class ScrapeRequest(BaseModel):
    """Body of ``POST /v1/scrape``: one URL, answered with its result (a one-URL job)."""

    model_config = ConfigDict(extra="forbid", strict=True)

    url: HttpUrl = Field(description="The URL to scrape")
    extract: Fields = Field(
        default_factory=dict,
        max_length=MAX_FIELDS,
        description="Field name → selector spec",
        json_schema_extra=ONLY_FIELD_NAMES,
    )
    options: JobOptions = Field(default_factory=JobOptions)
    priority: Priority = Field(default="normal", description="The job's lane")
    pipeline: RequestPipeline = Field(
        default_factory=list,
        max_length=MAX_STAGES,
        description="As for POST /v1/jobs",
        json_schema_extra=AT_MOST_ONE_AI_STAGE,
    )

    labels: dict[LabelKey, LabelValue] = Field(
        default_factory=dict,
        max_length=64,
        description="Free-form string labels (keys may not start with '__')",
        json_schema_extra=LABEL_KEYS,
    )
    timeout_s: float = Field(
        default=DEFAULT_SCRAPE_TIMEOUT_S,
        gt=0,
        le=MAX_SCRAPE_TIMEOUT_S,
        description="How long to wait for the result; past it the answer is a 504 naming the "
        "job, which goes on and stays queryable",
    )

    @model_validator(mode="after")
    def _formats(self) -> ScrapeRequest:
        check_format_names(self.extract, self.options.formats)
        return self

    @field_validator("extract")
    @classmethod
    def _field_names(cls, value: Fields) -> Fields:
        return check_field_names(value)

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


class JobSpec(BaseModel):
    """What the worker needs to process any task of a job (stored on the job document)."""

    model_config = ConfigDict(extra="ignore")

    extract: Fields = Field(default_factory=dict)
    options: JobOptions = Field(default_factory=JobOptions)
    crawl: CrawlSpec | None = None
    pipeline: Pipeline = Field(default_factory=list)
    priority: Priority = "normal"
    webhook: WebhookSpec | None = None

    @field_validator("pipeline", mode="before")
    @classmethod
    def _stored_pipeline(cls, value: Any) -> Any:
        return pipeline_from_stored(value)

    @classmethod
    def from_request(cls, request: JobRequest) -> JobSpec:
        return cls(
            extract=request.extract,
            options=request.options,
            crawl=request.crawl,
            pipeline=request.pipeline,
            priority=request.priority,
            webhook=request.webhook,
        )

    def to_document(self) -> dict[str, Any]:
        """The spec as stored on the job; the pipeline as one JSON string (a JSON Schema may
        hold what a Firestore map cannot), left out when empty."""
        document = self.model_dump(mode="json", exclude_none=True, exclude={"pipeline"})
        if self.pipeline:
            document["pipeline"] = pipeline_to_json(self.pipeline)
        return document
