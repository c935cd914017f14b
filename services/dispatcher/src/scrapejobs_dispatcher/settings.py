"""Dispatcher settings, read once from the environment by the process entrypoint."""

from __future__ import annotations

from typing import Literal

from pydantic import Field

from scrapejobs_dispatcher.edge.body_limit import DEFAULT_MAX_BODY_BYTES
from scrapejobs_dispatcher.monitors.monitor_service import MonitorLimits
from scrapejobs_dispatcher.system_health import HealthPolicy
from scrapejobs_dispatcher.tenants.iap_assertion import IAP_KEYS_URL
from scrapejobs_dispatcher.tenants.keyring import RECHECK_S
from scrapejobs_dispatcher.tenants.usage import Plan
from scrapejobs_dispatcher.uploads.multipart_upload import MULTIPART_ROOM
from scrapejobs_shared.config.settings import CommonSettings
from scrapejobs_shared.delivery.batching import DEFAULT_BATCH_SIZE, HELD_BATCH_SIZE, HOST_WINDOW
from scrapejobs_shared.domain.tenancy import DEFAULT_TENANT, TENANT_PATTERN, Role
from scrapejobs_shared.messaging.task_message import MAX_BATCH_SIZE
from scrapejobs_shared.messaging.topology import DEFAULT_TOPOLOGY
from scrapejobs_shared.options import ServedHere
from scrapejobs_shared.options.render.actions import (
    MAX_ACTIONS,
    MAX_SCRIPT_CHARS,
    MAX_WAIT_MS,
    ActionLimits,
)
from scrapejobs_shared.ports.budgeted_work import Budget


class DispatcherSettings(CommonSettings):
    auth_mode: Literal["iam", "api_key", "none"] = Field(
        default="iam",
        description="iam: Cloud Run IAM checks Google identity tokens at the edge; api_key: "
        "X-API-Key checked against api_key_hashes; none: local development only",
    )
    identity_database: str = Field(
        default="scrapejobs-identities",
        description="The Firestore database of API keys and signed-out dashboard sessions, "
        "apart from SCRAPEJOBS_FIRESTORE_DATABASE so that only the dispatcher's service account "
        "may use it (Terraform's IAM); what a release before it kept in the main database "
        "moves there at start. The same name as the main database keeps them together",
    )
    api_key_hashes: str = Field(
        default="",
        description="Comma-separated SHA-256 hex digests of bootstrap keys: administrators of "
        "every tenant (keys made at run time with POST /v1/keys are kept in Firestore)",
    )
    schedules: str = Field(
        default="",
        description="JSON object: each Cloud Scheduler job's name with the tenant of its jobs and "
        'the SHA-256 of its body, {"sj-nightly": {"tenant": "default", "body_sha256": "..."}} '
        "(Terraform writes it from var.schedules): a scheduler key submits only those",
    )
    scheduler_key_hashes: str = Field(
        default="",
        description="Comma-separated SHA-256 hex digests of keys of the scheduler role (tenant "
        "default): Cloud Scheduler's triggers and the maintenance calls, nothing else (make "
        "dev's local scheduler mints one in api_key mode)",
    )
    api_key_recheck_s: float = Field(
        default=RECHECK_S,
        ge=0,
        le=60,
        description="How long an instance trusts what it read of a key: a key revoked with "
        "DELETE /v1/keys/{id} is refused on every instance within this long",
    )
    tenant_pages_per_day: int = Field(
        default=0,
        ge=0,
        description="Each tenant's pages per UTC day unless PUT /v1/tenants/{t} set its own "
        "(0: no limit); a submission past it is a 429 with Retry-After",
    )
    tenant_pages_in_flight: int = Field(
        default=0,
        ge=0,
        description="Each tenant's pages fetched at once unless set per tenant (0: no limit)",
    )
    quota_recheck_s: float = Field(
        default=5.0,
        ge=0,
        le=60,
        description="How long an instance trusts what it read of a tenant's quota and of "
        "its pages today (a submission costs no read of its own)",
    )
    identities: str = Field(
        default="",
        description="iam mode: JSON object mapping a Google identity (e-mail) to its tenant and "
        'role, {"ops@example.com": {"tenant": "default", "role": "admin"}}; others are '
        "iam_default_role in iam_default_tenant",
    )
    iam_default_tenant: str = Field(
        default=DEFAULT_TENANT,
        pattern=TENANT_PATTERN,
        description="iam mode: the tenant of a Google identity that identities does not name",
    )
    iam_default_role: Role = Field(
        default=Role.MEMBER,
        description="iam mode: the role of a Google identity that identities does not name",
    )
    iap_audience: str = Field(
        default="",
        description="iam mode behind Identity-Aware Proxy: the audience of IAP's signed "
        "assertions (/projects/NUMBER/global/backendServices/ID, or /projects/NUMBER/apps/"
        "PROJECT); empty: an assertion is refused (the person's identity is only ever taken "
        "from a verified assertion)",
    )
    iap_keys_url: str = Field(
        default=IAP_KEYS_URL, description="Where IAP's public keys are read (PEM by key id)"
    )
    dashboard_cache_s: float = Field(
        default=5.0,
        ge=0,
        le=300,
        description="The dashboard's figures are kept this long per instance (0: not kept); "
        "a poll after that is answered with them while they are computed again",
    )
    session_key: str = Field(
        default="",
        pattern=r"^$|^.{32,}$",
        description="The deployment's secret that signs dashboard sessions (api_key mode; "
        "Secret Manager in Terraform): at least 32 characters; empty: each process draws its "
        "own (sessions last as long as the process: local development)",
    )
    dashboard_session_s: int = Field(
        default=12 * 3600,
        ge=60,
        le=30 * 86400,
        description="How long a dashboard sign-in lasts (api_key mode), in seconds",
    )
    batch_size: int = Field(
        default=DEFAULT_BATCH_SIZE,
        ge=1,
        le=MAX_BATCH_SIZE,
        description="URLs per task message (grouped by host); see bench/README.md",
    )
    held_batch_size: int = Field(
        default=HELD_BATCH_SIZE,
        ge=1,
        le=MAX_BATCH_SIZE,
        description="URLs per task message of a job that holds batches (a host of it has more "
        "URLs than host_window_batches batches take); below batch_size, another tenant's work "
        "on that host waits behind shorter batches, for more Firestore operations per page "
        "(bench/README.md, workload T)",
    )
    host_window_batches: int = Field(
        default=HOST_WINDOW,
        ge=0,
        le=1000,
        description="A job's batches of one host in the broker at once; the others wait in "
        "Firestore and are released by the workers as earlier ones finish, so another tenant's "
        "work on that host waits behind a few batches, not the whole job (0: all at once)",
    )
    reconcile_after_s: int = Field(
        default=DEFAULT_TOPOLOGY.max_backoff_s + DEFAULT_TOPOLOGY.ack_deadline_s + 30,
        ge=1,
        description="A batch with open tasks that nothing wrote for this long, and no delivery "
        "holds, is published again by POST /v1/maintenance/reconcile: longer than a healthy "
        "batch can go without a write (a nacked batch waits up to max_backoff_s for its "
        "redelivery, which answers within ack_deadline_s)",
    )
    coalesce_window_ms: float = Field(
        default=2.0,
        ge=0,
        le=100,
        description="Small jobs (one batch, no crawl) submitted within this many milliseconds "
        "of each other are created in one Firestore commit and published as one message; 0 "
        "turns coalescing off",
    )
    coalesce_busy_window_ms: float = Field(
        default=50.0,
        ge=0,
        le=1000,
        description="The coalescing window while submissions arrive faster than one per this "
        "many milliseconds (over the last second): more jobs per commit and per message, where "
        "alone each would wait for a push of its own",
    )
    idempotency_stale_s: float = Field(
        default=120,
        gt=0,
        description="A submission with an Idempotency-Key still unanswered after this long is "
        "taken as lost (its process died): a retry with the key may submit it again",
    )
    idempotency_key_ttl_s: int = Field(
        default=24 * 3600, ge=60, description="How long an Idempotency-Key is remembered"
    )
    health_error_rate_degraded: float = Field(
        default=0.10, ge=0, le=1, description="GET /v1/health: DEGRADED at this 5-minute error rate"
    )
    health_error_rate_unhealthy: float = Field(
        default=0.50, ge=0, le=1, description="GET /v1/health: UNHEALTHY at this error rate"
    )
    health_min_processed: int = Field(
        default=20, ge=1, description="Error rates count once this many tasks ran in 5 minutes"
    )
    health_backlog_target_s: float = Field(
        default=900,
        gt=0,
        description="Queued work older than this is DEGRADED; four times older, UNHEALTHY",
    )
    stats_max_open_jobs: int = Field(
        default=500, ge=1, description="Unfinished jobs whose counters a stats read sums"
    )
    max_body_bytes: int = Field(
        default=DEFAULT_MAX_BODY_BYTES, ge=1024, description="Larger request bodies get 413"
    )
    max_upload_bytes: int = Field(
        default=20 * 1024 * 1024,
        ge=1024,
        description="Largest file POST /v1/parse and /v2/parse read (checked before it is read "
        "whole); larger ones get 413. At most max_body_bytes less 64 KiB (Cloud Run takes "
        "32 MiB)",
    )
    parse_processes: int = Field(
        default=1, ge=1, le=32, description="Uploads read at once by an instance (others wait)"
    )
    parse_queue: int = Field(
        default=4,
        ge=1,
        le=64,
        description="Uploads an instance holds at once, received, waiting or read (each up to "
        "max_upload_bytes in memory); one more is a 503 with Retry-After, and one tenant "
        "holds at most half of them (a 429 past that)",
    )
    parse_budget_s: float = Field(
        default=30.0,
        gt=0,
        le=300,
        description="CPU seconds reading one upload may use; past them it fails extraction_timeout",
    )
    parse_memory_mb: int = Field(
        default=512,
        ge=0,
        le=16384,
        description="MiB the process reading an upload may grow by; past them it fails "
        "extraction_memory (0: no limit)",
    )
    compare_budget_s: float = Field(
        default=10.0,
        gt=0,
        le=300,
        description="CPU seconds comparing a hundred of a monitor's pages with their snapshots "
        "(or one changeTracking page) may use; past them those pages are settled without a "
        "diff: changed unless equal, diff.not_compared saying why",
    )
    firecrawl_render: Literal["plain", "auto"] = Field(
        default="plain",
        description="What /v2 does with a page when no waitFor or mobile asks to render it: "
        "plain (fetched as served; a page that shows nothing ends empty_content) or auto "
        "(rendered when it shows nothing, as Firecrawl renders every page; /v2 jobs then run "
        "in the render lane)",
    )
    plan_credits: int = Field(
        default=30_000_000,
        ge=0,
        description="Pages a billing period (a calendar month, UTC) may fetch, as Firecrawl's "
        "credit-usage reports it (a credit is a page fetched; remaining = this less what the "
        "month used)",
    )
    plan_tokens: int = Field(
        default=1_000_000_000,
        ge=0,
        description="Model tokens (in and out) the ai stages may use a billing period, as "
        "Firecrawl's token-usage reports it",
    )
    max_concurrency: int = Field(
        default=128,
        ge=1,
        description="Pages fetched at once across the deployment, as Firecrawl's "
        "concurrency-check and queue-status report it (Terraform: worker instances x pushes "
        "per instance x pages per push)",
    )
    zero_data_retention: bool = Field(
        default=True,
        description="Whether a synchronous scrape may ask that its result not be kept "
        "(zero_data_retention on /v1/scrape, zeroDataRetention on /v2/scrape: the job is deleted "
        "once its answer is read). false: such requests are refused naming this setting (a "
        "deployment whose backups keep every document cannot honour it)",
    )
    search_provider: Literal["searxng", "ddgs"] = Field(
        default="searxng",
        description="Who answers searches (/v2/search, /v1/search, a job's or a monitor's "
        "search): searxng, the instance SCRAPEJOBS_SEARXNG_URL names; ddgs, public engines "
        "asked from this process (a laptop with internet)",
    )
    searxng_url: str = Field(
        default="",
        pattern=r"^(https?://[^\s?#]+)?$",
        description="The SearXNG instance that answers searches (/v2/search, /v1/search): its "
        "base URL, its settings.yml enabling the json format (search.formats: [html, json]). "
        "Empty: a search is a 503 naming this setting",
    )
    searxng_audience: str = Field(
        default="",
        pattern=r"^(https://[^\s?#]+)?$",
        description="An instance behind Cloud Run IAM (Terraform's searxng_service): each "
        "search carries a Google ID token for this audience, its URL. Empty: none",
    )
    search_cache_s: float = Field(
        default=120.0,
        ge=0,
        le=3600,
        description="A tenant's search is answered again from memory this long per instance "
        "(0: never)",
    )
    scrape_max_wait_s: float = Field(
        default=240.0,
        gt=0,
        description="POST /v1/scrape waits at most this long, whatever its timeout_s: below the "
        "platform's request timeout (Cloud Run's default: 300 s), so the caller gets the 202 "
        "naming the job rather than a cut connection",
    )

    max_patterns_per_job: int = Field(
        default=64,
        ge=1,
        le=1000,
        description="Regular expressions a job may hold (extraction fields' re, crawl "
        "include/exclude, schema patterns); each is compiled within 512 KiB when submitted",
    )
    actions_max: int = Field(
        default=20, ge=1, le=MAX_ACTIONS, description="Browser actions a page may ask for"
    )
    actions_max_wait_ms: int = Field(
        default=30_000, ge=0, le=MAX_WAIT_MS, description="What a page's actions may wait, in all"
    )
    actions_max_script_chars: int = Field(
        default=10_000,
        ge=1,
        le=MAX_SCRIPT_CHARS,
        description="The longest script an execute_javascript action may run",
    )
    monitors_per_tenant: int = Field(
        default=100, ge=1, description="Monitors a tenant may keep (more: a 422 naming it)"
    )
    monitor_max_pages: int = Field(
        default=1000,
        ge=1,
        le=10_000,
        description="Pages one check of a monitor may take: its URLs, or its crawl's max_pages "
        "(more: a 422 naming the field)",
    )

    def search_served(self) -> bool:
        """Whether a search provider is configured (else a search is a 503 naming it)."""
        return self.search_provider == "ddgs" or bool(self.searxng_url)

    def upload_limit(self) -> int:
        """The largest upload read: ``max_upload_bytes``, within what a request body may be
        (less room for the rest of a multipart request)."""
        return max(0, min(self.max_upload_bytes, self.max_body_bytes - MULTIPART_ROOM))

    def action_limits(self) -> ActionLimits:
        return ActionLimits(
            self.actions_max, self.actions_max_wait_ms, self.actions_max_script_chars
        )

    def compare_budget(self) -> Budget:
        return Budget("page comparison", "SCRAPEJOBS_COMPARE_BUDGET_S", self.compare_budget_s)

    def monitor_limits(self) -> MonitorLimits:
        return MonitorLimits(self.monitors_per_tenant, self.monitor_max_pages)

    def served_here(self) -> ServedHere:
        return ServedHere(
            zero_data_retention=self.zero_data_retention,
            unverified_tls=self.allow_unverified_tls,
            firecrawl_render=self.firecrawl_render,
            keeps_files=bool(self.files_bucket),
            proxies=self.proxy_pool(),
        )

    def plan(self) -> Plan:
        return Plan(self.plan_credits, self.plan_tokens, self.max_concurrency)

    def health_policy(self) -> HealthPolicy:
        return HealthPolicy(
            error_rate_degraded=self.health_error_rate_degraded,
            error_rate_unhealthy=self.health_error_rate_unhealthy,
            min_processed=self.health_min_processed,
            backlog_target_s=self.health_backlog_target_s,
            stuck_after_s=self.reconcile_after_s,
            max_open_jobs=self.stats_max_open_jobs,
        )
