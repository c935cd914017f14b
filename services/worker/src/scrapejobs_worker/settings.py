"""Worker settings, read once from the environment by the process entrypoint."""

from __future__ import annotations

from typing import Annotated, Literal

from pydantic import Field, field_validator
from pydantic_settings import NoDecode

from scrapejobs_shared.config.settings import CommonSettings
from scrapejobs_shared.messaging.topology import DEFAULT_TOPOLOGY
from scrapejobs_shared.ports.budgeted_work import Budget
from scrapejobs_worker.delivery.push_auth import GOOGLE_JWKS_URL


class WorkerSettings(CommonSettings):
    fetch_timeout_s: float = Field(
        default=30.0, gt=0, le=50, description="Cap on each fetch's overall deadline"
    )
    lease_margin_s: float = Field(
        default=10.0, ge=0, description="A claimed task is leased for fetch_timeout_s + this"
    )
    fetch_allowlist: Annotated[list[str], NoDecode] = Field(
        default_factory=list,
        description="Networks (CIDR) that may be fetched although not globally routable; "
        "comma-separated. Empty in production; loopback for local development and tests.",
    )
    fetch_refused_ports: Annotated[list[int], NoDecode] = Field(
        default_factory=list,
        description="Ports never fetched, on allowlisted networks too; comma-separated. The "
        "local stack lists its emulators' and services' own ports",
    )
    max_body_bytes: int = Field(default=10 * 1024 * 1024, ge=1024)
    render_browser_path: str = Field(
        default="",
        description="Chromium's executable (/usr/bin/chromium-headless-shell, or the full "
        "/usr/bin/chromium at about twice the CPU per page): this worker renders pages "
        "of jobs with options.render (the render lane's service); empty: it refuses them",
    )
    api_url: str = Field(
        default="http://127.0.0.1:8080",
        description="The dispatcher's URL as its callers reach it: the URLs of the files a "
        "page makes in the browser (screenshots) are under it (Terraform: the dispatcher's "
        "own URL unless api_url says another)",
    )
    actions_max_pdf_pages: int = Field(
        default=100,
        ge=1,
        le=1000,
        description="Pages a pdf action prints at most (the first ones)",
    )
    actions_script_timeout_s: float = Field(
        default=5.0,
        gt=0,
        le=60,
        description="How long an execute_javascript action's script may run (past it the "
        "page fails action_failed, naming the action)",
    )
    render_pages_per_browser: int = Field(
        default=100, ge=1, description="A browser is replaced after rendering this many pages"
    )
    render_sandbox: Literal["auto", "on", "off"] = Field(
        default="auto",
        description="Chromium's own sandbox: auto keeps it wherever the environment allows "
        "(a non-root user with user namespaces) and logs when it cannot; on refuses to render "
        "without it; off never asks for it",
    )
    render_max_pages: int = Field(
        default=8, ge=1, le=64, description="Pages one worker process renders at once"
    )
    extraction_processes: int = Field(
        default=2,
        ge=0,
        le=32,
        description="Processes that extract pages (fields, formats, pipeline) per worker "
        "process: the first takes every page while it keeps up, the others the pages that "
        "waited 25 ms for it; 0: on the event loop, without a budget (debugging only)",
    )
    extraction_budget_s: float = Field(
        default=10.0,
        gt=0,
        le=60,
        description="CPU seconds a page's extraction and pipeline may use (rounded up to whole "
        "seconds); past them the kernel ends its process and the page fails extraction_timeout",
    )
    links_budget_s: float = Field(
        default=5.0,
        gt=0,
        le=60,
        description="CPU seconds filtering a crawled page's links through the crawl's "
        "include/exclude patterns may use; past them the page fails links_timeout",
    )
    document_processes: int = Field(
        default=1,
        ge=0,
        le=16,
        description="Processes that read documents (PDF, Word, spreadsheets...) apart from "
        "pages, at the lowest CPU priority, so that documents never starve pages (started with "
        "the first document); 0: documents are read by the page processes",
    )
    extraction_memory_mb: int = Field(
        default=256,
        ge=0,
        le=16384,
        description="MiB an extraction process may grow past its size at start while it "
        "extracts a page; past them the page fails extraction_memory and the process is "
        "replaced (0: no limit)",
    )
    push_auth: Literal["oidc", "none"] = "oidc"
    push_audience: str = ""
    push_service_account: str = ""
    push_verify_signature: bool = True
    push_jwks_url: str = GOOGLE_JWKS_URL
    per_host_concurrency: int = Field(
        default=8, ge=1, le=256, description="Fetches in flight per host across all instances"
    )
    per_host_rps: float = Field(default=0.0, ge=0, description="Request starts/s per host; 0: off")
    proxy_sticky: bool = Field(
        default=False,
        description="A job's requests to one site go through the same proxy of its pool while "
        "that proxy is up (sites that tie a session to an address); false: the pool's proxies "
        "take turns",
    )
    tenant_pages_in_flight: int = Field(
        default=0,
        ge=0,
        description="Pages a tenant may have fetched at once across all instances unless PUT "
        "/v1/tenants/{t} set its own (0: no cap)",
    )
    max_throttle_wait_s: float = Field(
        default=10.0, ge=0, le=40, description="In-request wait for a busy host before deferring"
    )
    max_deferrals: int = Field(
        default=50, ge=0, description="Throttle deferrals of one task before it counts as a failure"
    )
    throttle_hold_s: float = Field(
        default=10.0, ge=0, description="Host pause after a 429 without Retry-After"
    )
    retry_after_cap_s: float = Field(default=300.0, ge=0, description="Cap on honoured Retry-After")
    breaker_failure_threshold: int = Field(default=5, ge=1)
    breaker_cooldown_s: float = Field(default=60.0, ge=0)
    warm_slot_idle_s: float = Field(
        default=1.0,
        ge=0,
        le=30,
        description="Keep a host slot for this instance's next fetch to that host for this long "
        "after a fetch (saves three Firestore round trips per page); 0: give slots back at once "
        "(a slot takes at most 4 takes in any 10 s, so each host then gets at most 4 times its "
        "concurrency in fresh fetches at once and its concurrency every 2.5 s after)",
    )
    warm_slot_keep_s: float = Field(
        default=20.0, gt=0, le=300, description="How long after it was taken a warm slot may serve"
    )

    ack_deadline_s: float = Field(
        default=DEFAULT_TOPOLOGY.ack_deadline_s,
        ge=10,
        le=600,
        description="The push subscription's ack deadline: a batch always answers before it",
    )
    max_delivery_attempts: int = Field(
        default=DEFAULT_TOPOLOGY.max_delivery_attempts,
        ge=5,
        le=100,
        description="Attempts after which a task still failing transiently ends dead_lettered "
        "(the subscription's dead-letter policy: Pub/Sub takes 5 to 100)",
    )
    webhook_secrets: str = Field(
        default="",
        description="Comma-separated whsec_ keys signing webhooks of jobs without their own "
        "secret; every key signs (several during a rotation). From Secret Manager in production",
    )
    webhook_max_attempts: int = Field(
        default=8, ge=1, le=100, description="Webhook attempts before an event ends failed"
    )
    batch_concurrency: int = Field(
        default=8,
        ge=1,
        le=256,
        description="Tasks of one batch fetched at once (a batch is mostly one host: the "
        "per-host default); the instance runs as many batches at once as it gets pushes",
    )
    # 1.25 s: a running batch's commit writes its document and its counter shard, which also
    # take its claim and its end (and a deferred remainder's claim): eight commits, a claim and
    # an end in any 10 s keep both at one write a second (make scale, one host at 50 req/s at
    # full size: at 1 s, 135 batch documents and their shards at 1.1-1.3 writes a second).
    # At 2 s a job's progress and ETA lag by up to 2 s (tests/e2e/test_progress.py failed a
    # fresh-clone CI); at 1.25 s, committed on time, no later than at 1 s polled every quarter.
    batch_flush_interval_s: float = Field(
        default=1.25,
        ge=1.25,
        le=10,
        description="A running batch commits this often: its finished tasks become visible, "
        "its lease is renewed, and it learns of a cancel of its job (at least 1.25 s: a "
        "batch's document takes about one write a second)",
    )
    worker_report_s: float = Field(
        default=1.0,
        ge=0.2,
        le=60,
        description="The workers view: this process reports itself at most this often, inside "
        "a batch commit when it makes one (its document's writes per second), else on its own",
    )

    task_subscription: str = Field(
        default=DEFAULT_TOPOLOGY.task_subscription,
        description="The push subscription's name, for metrics when a push does not name it",
    )

    @field_validator("fetch_allowlist", "fetch_refused_ports", mode="before")
    @classmethod
    def _split(cls, value: object) -> object:
        if isinstance(value, str):
            return [part.strip() for part in value.split(",") if part.strip()]
        return value

    def links_budget(self) -> Budget:
        return Budget("crawl's link filter", "SCRAPEJOBS_LINKS_BUDGET_S", self.links_budget_s)

    def stages_budget(self) -> Budget:
        """The ``ai`` stage's answer check and the stages after it: a page's extraction budget."""
        return Budget(
            "answer's check and later stages",
            "SCRAPEJOBS_EXTRACTION_BUDGET_S",
            self.extraction_budget_s,
            memory_mb=self.extraction_memory_mb,
        )
