"""Settings common to both services (environment variables prefixed ``SCRAPEJOBS_``)."""

from __future__ import annotations

from typing import Literal

from pydantic import Field, SecretStr
from pydantic_settings import BaseSettings, SettingsConfigDict

from scrapejobs_shared.domain.model_usage import ModelPrices
from scrapejobs_shared.extraction.documents.ocr import OcrLimits
from scrapejobs_shared.messaging.topology import DEFAULT_TOPOLOGY
from scrapejobs_shared.options.proxy_pools import ProxyPool, parse_pool

DEFAULT_USER_AGENT = "scrapejobs/0.1 (+https://github.com/scrapejobs/scrapejobs)"  # the one default


class CommonSettings(BaseSettings):
    model_config = SettingsConfigDict(env_prefix="SCRAPEJOBS_", extra="ignore")

    project_id: str = Field(default="scrapejobs-local", description="Google Cloud project id")
    firestore_database: str = "(default)"
    task_topic: str = DEFAULT_TOPOLOGY.task_topic
    webhook_topic: str = DEFAULT_TOPOLOGY.webhook_topic
    log_level: str = "INFO"
    user_agent: str = Field(
        default=DEFAULT_USER_AGENT,
        description="The worker's User-Agent; its product token picks robots.txt groups "
        "(the worker's fetches, the dispatcher's /v2/map)",
    )
    firestore_timeout_s: float = Field(
        default=5.0,
        gt=0,
        le=60,
        description="Every Firestore call, its retries included, ends within this many seconds; "
        "past it an API request answers 503 dependency_unavailable and a push is nacked",
    )
    pubsub_timeout_s: float = Field(
        default=5.0,
        gt=0,
        le=60,
        description="Every publish to Pub/Sub, its retries included, ends within this many "
        "seconds; past it an API request answers 503 dependency_unavailable",
    )
    stats_every_s: float = Field(
        default=1.5,
        ge=0,
        le=60,
        description="How often a process writes its outcome statistics (one document per tenant "
        "and 5-minute slot, each at most once in this many seconds: Firestore's ~1 write a "
        "second a document); a batch's end writes at once while writes are in hand (3, one "
        "more each interval), so a document takes at most 10 writes in any 10 s at 1.5. 0: at "
        "every settle",
    )
    retention_days: int = Field(default=30, ge=1, le=3650, description="TTL of jobs and results")
    files_bucket: str = Field(
        default="",
        description="The Cloud Storage bucket keeping the files pages make in the browser "
        "(screenshots), per tenant and job, for the job's retention; empty: none is kept and "
        "the screenshot format is refused",
    )
    ai_provider: Literal["openai", "vertex"] | None = Field(
        default=None,
        description="Who answers 'ai' stages: openai (any OpenAI-compatible server: "
        "SCRAPEJOBS_AI_BASE_URL, SCRAPEJOBS_AI_API_KEY) or vertex (Gemini on Vertex AI, the "
        "service account's identity); unset: 'ai' stages are refused (422)",
    )
    ai_model: str = Field(default="", description="The model 'ai' stages use unless they name one")
    ai_models: str = Field(
        default="",
        description="Other models an 'ai' stage may name, comma-separated (with "
        "SCRAPEJOBS_AI_MODEL, the only ones offered: a stage naming another is a 422); both "
        "empty: any model the provider serves",
    )
    ai_base_url: str = Field(default="", description="openai: the server's base URL (…/v1)")
    ai_api_key: SecretStr = Field(default=SecretStr(""), description="openai: the API key")
    ai_location: str = Field(default="us-central1", description="vertex: the model's region")
    ai_max_in_flight: int = Field(
        default=8, ge=1, le=1000, description="Model calls at once across every instance"
    )
    ai_timeout_s: float = Field(
        default=120.0,
        gt=0,
        le=600,
        description="One model call's timeout; a model slot is leased for three of them (an "
        "answer, its retries and its repair), so a crashed worker's slots free within that",
    )
    ai_price_per_mtok_in: float | None = Field(
        default=None,
        ge=0,
        description="Price per million input tokens: with either price set, the API and the "
        "dashboard show what model calls cost (a price not set counts as free)",
    )
    ai_price_per_mtok_out: float | None = Field(
        default=None, ge=0, description="Price per million output tokens (see the input price)"
    )
    telemetry_exporter: Literal["none", "console", "otlp", "gcp"] = Field(
        default="none",
        description="Where spans and metrics go: none (local development), console (stdout), "
        "otlp (OTEL_EXPORTER_OTLP_ENDPOINT, HTTP), gcp (Cloud Trace and Cloud Monitoring)",
    )
    telemetry_trace_ratio: float = Field(
        default=1.0,
        ge=0,
        le=1,
        description="Fraction of traces recorded (by trace id: both services keep the same ones)",
    )
    telemetry_metric_interval_s: float = Field(
        default=60.0, ge=5, description="How often metrics are exported"
    )
    allow_unverified_tls: bool = Field(
        default=True,
        description="Whether a job may fetch a site whose TLS certificate fails verification "
        "(options.verify_tls false; Firecrawl's skipTlsVerification, which its SDKs 3.0-4.54 "
        "send on every scrape and its server defaults to true). false: such a request is "
        "refused, naming this setting, and /v2 verifies unless told otherwise; workers verify "
        "every certificate whatever a task says (work published before it was turned off)",
    )
    budgeted_processes: int = Field(
        default=1,
        ge=1,
        le=16,
        description="Processes running work whose cost a caller controls (a monitor's page "
        "comparison, a crawl's patterns over a page's links) at once, each call within its "
        "budget; other calls wait",
    )
    ocr_page_budget_s: float = Field(
        default=10.0,
        gt=0,
        le=120,
        description="CPU seconds each page read by OCR (a scan's, an image's) may use, beside "
        "the document's own extraction budget; past them the document fails extraction_timeout",
    )
    ocr_max_pages: int = Field(
        default=50,
        ge=0,
        le=2000,
        description="Pages of one document read by OCR at most; its other pages without text "
        "stay empty and the result's errors.document says how many (0: no OCR)",
    )
    ocr_max_pixels: int = Field(
        default=40_000_000,
        ge=1_000_000,
        le=200_000_000,
        description="Pixels of an image read by OCR at most, checked from its header before it "
        "is decoded (a larger one fails unsupported_content); a PDF page is rasterised below it",
    )
    ocr_page_weight: int = Field(
        default=1,
        ge=0,
        le=100,
        description="Credits a page read by OCR costs beside the page's own (usage, quotas)",
    )

    proxies: SecretStr = Field(
        default=SecretStr(""),
        description="Proxy pools pages go through: a JSON list of {url, country, tier} (url "
        "http://, https:// or socks5://, with credentials if any; country ISO 3166-1 alpha-2; "
        "tier basic, the default, or stealth). Empty: every page goes direct and a job asking "
        "for a country or stealth is refused. From Secret Manager in production; never logged",
    )
    proxy_default: Literal["direct", "basic"] = Field(
        default="direct",
        description="A job that asks for no proxy: direct, or through the basic pool (where "
        "one is configured)",
    )
    tenant_proxies: bool = Field(
        default=False,
        description="Tenants may have proxy pools of their own (PUT /v1/tenants/{t}/proxies, "
        "admin keys), which their jobs go through instead of the deployment's; the API "
        "document then offers every country and tier, refused at submit where the caller's "
        "pools serve none",
    )

    def ocr_limits(self) -> OcrLimits:
        return OcrLimits(
            self.ocr_page_budget_s, self.ocr_max_pages, self.ocr_max_pixels, self.ocr_page_weight
        )

    def proxy_pool(self) -> ProxyPool:
        """The pools of ``proxies`` (read by each composition root as it starts: a list that
        cannot be read stops it with ``InvalidProxies``, which names no credential; a
        validator here would put the whole value in pydantic's error)."""
        return parse_pool(self.proxies.get_secret_value())

    def offered_models(self) -> frozenset[str] | None:
        """The models an ``ai`` stage may name, or None when any may be named."""
        named = {part.strip() for part in self.ai_models.split(",") if part.strip()}
        offered = named | ({self.ai_model} if self.ai_model else set())
        return frozenset(offered) or None

    def ai_prices(self) -> ModelPrices | None:
        """The model's prices, or None when neither is set (no cost is shown)."""
        if self.ai_price_per_mtok_in is None and self.ai_price_per_mtok_out is None:
            return None
        return ModelPrices(self.ai_price_per_mtok_in or 0.0, self.ai_price_per_mtok_out or 0.0)
