locals {
  labels = merge(
    {
      app        = "scrapejobs"
      managed-by = "terraform"
    },
    var.labels,
  )

  project_number = data.google_project.this.number

  dispatcher_service_name = "${var.name_prefix}-dispatcher"
  worker_service_name     = local.worker_services["shared"].name # lanes.tf

  # The deterministic Cloud Run URL (https://SERVICE-PROJECT_NUMBER.REGION.run.app).
  # It is known before the service exists, which breaks the cycle "the worker's env needs
  # the worker's URL". Pub/Sub signs its OIDC tokens with this audience and the worker
  # checks it (SCRAPEJOBS_PUSH_AUDIENCE); it is also registered as a custom audience on the
  # worker so that the Cloud Run edge accepts it whatever URL the push endpoint uses.
  worker_audience = "https://${local.worker_service_name}-${local.project_number}.${var.region}.run.app"

  # Each worker service (local.worker_services in lanes.tf) has its own deterministic URL,
  # hence its own push audience; the shared worker's is worker_audience.
  worker_audiences = {
    for key, worker in local.worker_services : key => "https://${worker.name}-${local.project_number}.${var.region}.run.app"
  }

  # The Pub/Sub service agent: forwards dead letters and mints push OIDC tokens.
  pubsub_service_agent = "serviceAccount:service-${local.project_number}@gcp-sa-pubsub.iam.gserviceaccount.com"

  firestore_location = coalesce(var.firestore_location, var.region)
  scheduler_region   = coalesce(var.scheduler_region, var.region)

  api_key_mode = var.dispatcher_auth_mode == "api_key"
  # Identity-Aware Proxy in front of the dispatcher (iap.tf)
  dispatcher_iap = length(var.dispatcher_iap_members) > 0

  # Environment shared by both services (pydantic-settings, prefix SCRAPEJOBS_).
  # PORT is set by Cloud Run and must not be set here.
  common_env = {
    SCRAPEJOBS_PROJECT_ID         = var.project_id
    SCRAPEJOBS_FIRESTORE_DATABASE = var.firestore_database
    SCRAPEJOBS_TASK_TOPIC         = var.task_topic
    SCRAPEJOBS_WEBHOOK_TOPIC      = var.webhook_topic
    SCRAPEJOBS_LOG_LEVEL          = var.log_level
    SCRAPEJOBS_RETENTION_DAYS     = tostring(var.retention_days)
    # screenshots: written by the renderer, served by the dispatcher (files.tf)
    SCRAPEJOBS_FILES_BUCKET = local.files_bucket
    # every Firestore call and publish ends within these: past them a 503 (docs/semantics.md, failures)
    SCRAPEJOBS_FIRESTORE_TIMEOUT_S = tostring(var.firestore_timeout_s)
    SCRAPEJOBS_PUBSUB_TIMEOUT_S    = tostring(var.pubsub_timeout_s)
    # Spans and metrics: Cloud Trace and Cloud Monitoring by default (iam.tf grants the roles).
    SCRAPEJOBS_TELEMETRY_EXPORTER    = var.telemetry_exporter
    SCRAPEJOBS_TELEMETRY_TRACE_RATIO = tostring(var.telemetry_trace_ratio)
    # a certificate that fails verification may be let through by the job (docs/firecrawl.md):
    # the dispatcher refuses such jobs when it may not, and workers verify whatever a task says
    SCRAPEJOBS_ALLOW_UNVERIFIED_TLS = tostring(var.allow_unverified_tls)
    # with proxy pools (proxies.tf): whether a job that asks for no proxy goes through the basic pool
    SCRAPEJOBS_PROXY_DEFAULT = var.proxy_default
    # tenants' own pools (PUT /v1/tenants/{t}/proxies), used instead of the deployment's
    SCRAPEJOBS_TENANT_PROXIES = tostring(var.tenant_proxies)
    # scans and images read by OCR, on the worker's pages and the dispatcher's uploads
    SCRAPEJOBS_OCR_MAX_PAGES     = tostring(var.ocr.max_pages)
    SCRAPEJOBS_OCR_PAGE_BUDGET_S = tostring(var.ocr.page_budget_s)
    SCRAPEJOBS_OCR_MAX_PIXELS    = tostring(var.ocr.max_pixels)
    SCRAPEJOBS_OCR_PAGE_WEIGHT   = tostring(var.ocr.page_weight)
  }

  telemetry_to_gcp = var.telemetry_exporter == "gcp"

  dispatcher_env = merge(local.common_env, local.ai_env, {
    SCRAPEJOBS_AUTH_MODE = var.dispatcher_auth_mode
    # API keys and signed-out sessions: a database only the dispatcher may use (iam.tf)
    SCRAPEJOBS_IDENTITY_DATABASE = var.identity_database
    # iam mode: who is which tenant and role (the scheduler's identity is the scheduler)
    SCRAPEJOBS_IDENTITIES = jsonencode(merge(
      { (google_service_account.scheduler.email) = { tenant = var.dispatcher_default_tenant, role = "scheduler" } },
      var.dispatcher_identities,
    ))
    SCRAPEJOBS_IAM_DEFAULT_TENANT = var.dispatcher_default_tenant
    SCRAPEJOBS_IAM_DEFAULT_ROLE   = var.dispatcher_default_role
    # IAP directly on the dispatcher's service signs its assertions for the service itself
    SCRAPEJOBS_IAP_AUDIENCE = var.dispatcher_iap_audience != "" ? var.dispatcher_iap_audience : (
      local.dispatcher_iap ? "/projects/${local.project_number}/locations/${var.region}/services/${local.dispatcher_service_name}" : ""
    )
    # the schedules a scheduler key may send: each Cloud Scheduler job's tenant and body digest
    SCRAPEJOBS_SCHEDULES = jsonencode({
      for k, s in var.schedules : "${var.name_prefix}-${k}" => {
        tenant      = s.tenant
        body_sha256 = sha256(jsonencode(jsondecode(s.body)))
      }
    })
    # search (/v2/search, /v1/search): the SearXNG instance asked, answers kept per tenant
    # (searxng_service: ours beside it, called with an ID token for its URL)
    SCRAPEJOBS_SEARXNG_URL      = var.searxng_service ? google_cloud_run_v2_service.searxng[0].uri : var.searxng_url
    SCRAPEJOBS_SEARXNG_AUDIENCE = var.searxng_service ? google_cloud_run_v2_service.searxng[0].uri : ""
    SCRAPEJOBS_SEARCH_CACHE_S   = tostring(var.search_cache_s)
    # quotas of a tenant without its own (docs/operations.md, "Quotas and usage")
    SCRAPEJOBS_TENANT_PAGES_PER_DAY   = tostring(var.tenant_pages_per_day)
    SCRAPEJOBS_TENANT_PAGES_IN_FLIGHT = tostring(var.tenant_pages_in_flight)
    # a job's batches of one host in Pub/Sub at once (docs/operations.md, "A fair share")
    SCRAPEJOBS_HOST_WINDOW_BATCHES = tostring(var.host_window_batches)
    SCRAPEJOBS_BATCH_SIZE          = tostring(var.task_batch_size)
    # longer than a healthy batch can go without a write: a redelivery after max backoff
    SCRAPEJOBS_RECONCILE_AFTER_S = tostring(var.max_backoff_s + var.ack_deadline_s + 30)
    # POST /v1/scrape answers its 504 (naming the job) before Cloud Run cuts the request
    SCRAPEJOBS_SCRAPE_MAX_WAIT_S = tostring(var.dispatcher_request_timeout_s - 5)
    # small jobs submitted together share one commit and one message (docs/api.md, coalescing)
    SCRAPEJOBS_COALESCE_WINDOW_MS      = tostring(var.dispatcher_coalesce_window_ms)
    SCRAPEJOBS_COALESCE_BUSY_WINDOW_MS = tostring(var.dispatcher_coalesce_busy_window_ms)
    # a keyed submission still unanswered past the request timeout died with its request
    SCRAPEJOBS_IDEMPOTENCY_STALE_S = tostring(var.dispatcher_request_timeout_s + 60)
    SCRAPEJOBS_MONITORS_PER_TENANT = tostring(var.monitors_per_tenant)
    SCRAPEJOBS_MONITOR_MAX_PAGES   = tostring(var.monitor_max_pages)
    # uploads read by POST /v1/parse and /v2/parse (docs/api.md, "Uploads")
    SCRAPEJOBS_MAX_UPLOAD_BYTES = tostring(var.max_upload_bytes)
    # a page's browser actions (submission/rules/action_limits.py)
    SCRAPEJOBS_ACTIONS_MAX              = tostring(var.actions_max)
    SCRAPEJOBS_ACTIONS_MAX_WAIT_MS      = tostring(var.actions_max_wait_ms)
    SCRAPEJOBS_ACTIONS_MAX_SCRIPT_CHARS = tostring(var.actions_max_script_chars)
    SCRAPEJOBS_PARSE_MEMORY_MB          = tostring(var.parse_memory_mb)
    SCRAPEJOBS_PARSE_QUEUE              = tostring(var.parse_queue)
    # what Firecrawl's usage calls report (docs/firecrawl.md, "Usage")
    SCRAPEJOBS_FIRECRAWL_RENDER = var.firecrawl_render
    # a synchronous scrape's result answered and not kept (scrapejobs_shared/options/data_retention.py)
    SCRAPEJOBS_ZERO_DATA_RETENTION = tostring(var.zero_data_retention)
    SCRAPEJOBS_PLAN_CREDITS        = tostring(var.plan_credits)
    SCRAPEJOBS_PLAN_TOKENS         = tostring(var.plan_tokens)
    SCRAPEJOBS_MAX_CONCURRENCY     = tostring(var.worker_max_instances * var.worker_concurrency * var.worker_batch_concurrency)
  })

  worker_env = merge(local.common_env, local.ai_env, {
    # a tenant's pages in flight across every worker, unless set per tenant
    SCRAPEJOBS_TENANT_PAGES_IN_FLIGHT = tostring(var.tenant_pages_in_flight)
    SCRAPEJOBS_PUSH_AUTH              = "oidc"
    SCRAPEJOBS_PUSH_AUDIENCE          = local.worker_audience
    SCRAPEJOBS_PUSH_SERVICE_ACCOUNT   = google_service_account.push_invoker.email
    # Cloud Run IAM validates the token at the edge and strips its signature before the
    # request reaches the container; the app still checks aud/email/email_verified/exp.
    SCRAPEJOBS_PUSH_VERIFY_SIGNATURE = "false"
    SCRAPEJOBS_FETCH_TIMEOUT_S       = tostring(var.worker_fetch_timeout_s)
    SCRAPEJOBS_FETCH_ALLOWLIST       = join(",", var.worker_fetch_allowlist)
    SCRAPEJOBS_PER_HOST_CONCURRENCY  = tostring(var.worker_per_host_concurrency)
    SCRAPEJOBS_PER_HOST_RPS          = tostring(var.worker_per_host_rps)
    SCRAPEJOBS_PROXY_STICKY          = tostring(var.worker_proxy_sticky)
    SCRAPEJOBS_WARM_SLOT_IDLE_S      = tostring(var.worker_warm_slot_idle_s)
    # every page is extracted in a process of its own, stopped past its budget (docs/semantics.md)
    SCRAPEJOBS_EXTRACTION_PROCESSES = tostring(var.worker_extraction_processes)
    SCRAPEJOBS_DOCUMENT_PROCESSES   = tostring(var.worker_document_processes)
    SCRAPEJOBS_EXTRACTION_BUDGET_S  = tostring(var.worker_extraction_budget_s)
    SCRAPEJOBS_EXTRACTION_MEMORY_MB = tostring(var.worker_extraction_memory_mb)
    # A batch always answers within the subscription's ack deadline, and a task still failing
    # after as many attempts as the subscription delivers ends dead_lettered.
    SCRAPEJOBS_ACK_DEADLINE_S        = tostring(var.ack_deadline_s)
    SCRAPEJOBS_MAX_DELIVERY_ATTEMPTS = tostring(var.max_delivery_attempts)
    SCRAPEJOBS_BATCH_CONCURRENCY     = tostring(var.worker_batch_concurrency)
    # messaging.destination.subscription.name of the worker's metrics when a push omits it
    SCRAPEJOBS_TASK_SUBSCRIPTION = var.task_subscription
  })

  # What a worker service's role (local.worker_services in lanes.tf) sets: the renderer is
  # the worker image with Chromium, sized for a browser, its batches as wide as its pages.
  worker_roles = {
    worker = {
      image       = var.worker_image
      cpu         = var.worker_cpu
      memory      = var.worker_memory
      concurrency = var.worker_concurrency
      env         = {}
    }
    renderer = {
      image       = var.renderer_image
      cpu         = var.renderer_cpu
      memory      = var.renderer_memory
      concurrency = var.renderer_concurrency
      env = {
        SCRAPEJOBS_RENDER_BROWSER_PATH      = "/usr/bin/chromium-headless-shell"
        SCRAPEJOBS_RENDER_MAX_PAGES         = tostring(var.renderer_pages)
        SCRAPEJOBS_BATCH_CONCURRENCY        = tostring(var.renderer_pages)
        SCRAPEJOBS_API_URL                  = local.api_url # the screenshots' URLs
        SCRAPEJOBS_ACTIONS_SCRIPT_TIMEOUT_S = tostring(var.actions_script_timeout_s)
        SCRAPEJOBS_ACTIONS_MAX_PDF_PAGES    = tostring(var.actions_max_pdf_pages)
      }
    }
  }

  # The dispatcher's maintenance endpoints, called by Cloud Scheduler (scheduler.tf).
  maintenance_jobs = {
    "republish-stuck" = {
      description = "scrapejobs: republish submissions that stopped before publishing"
      schedule    = "*/10 * * * *"
      path        = "/v1/maintenance/republish"
    }
    "reconcile" = {
      description = "scrapejobs: publish again batches whose messages were lost"
      schedule    = "*/5 * * * *"
      path        = "/v1/maintenance/reconcile"
    }
    "usage" = {
      description = "scrapejobs: sum each ended day's usage (Firecrawl's credit and token history)"
      schedule    = "17 0 * * *"
      path        = "/v1/maintenance/usage"
    }
    "monitors" = {
      description = "scrapejobs: start the checks of monitors whose time has come"
      schedule    = "* * * * *"
      path        = "/v1/maintenance/monitors"
    }
  }

  # Collections (or collection groups) whose documents carry an `expire_at` timestamp.
  ttl_collections = toset(["jobs", "batches", "tasks", "counters", "crawl", "hosts", "slots", "wants", "scheduler_triggers", "idempotency_keys", "rejected_messages", "stats_slots", "stats_rollups", "workers", "handoffs", "ai_answers", "page_cache", "checks", "check_pages", "same_pages", "snapshots", "quota_days", "reservations"])
}
