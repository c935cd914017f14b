# ---------------------------------------------------------------------------------------
# Project and naming
# ---------------------------------------------------------------------------------------

variable "project_id" {
  type        = string
  description = "ID of the Google Cloud project to deploy into."

  validation {
    condition     = can(regex("^[a-z][a-z0-9-]{4,28}[a-z0-9]$", var.project_id))
    error_message = "project_id must be a valid project ID (6-30 lowercase letters, digits and hyphens)."
  }
}

variable "region" {
  type        = string
  description = "Region for Cloud Run, Artifact Registry and (unless overridden) Firestore and Cloud Scheduler."
  default     = "us-central1"
}

variable "name_prefix" {
  type        = string
  description = "Prefix of every resource name (services are <prefix>-dispatcher and <prefix>-worker, service accounts <prefix>-<role>). Keep it in sync with the _DISPATCHER_SERVICE/_WORKER_SERVICE substitutions of cloudbuild.yaml."
  default     = "scrapejobs"

  validation {
    # Service account ids are at most 30 characters and "-push-invoker" takes 13.
    condition     = can(regex("^[a-z][a-z0-9-]{0,15}[a-z0-9]$", var.name_prefix))
    error_message = "name_prefix must be 2-17 lowercase letters, digits or hyphens, start with a letter and not end with a hyphen."
  }
}

variable "labels" {
  type        = map(string)
  description = "Extra labels applied to every resource that supports labels (app=scrapejobs and managed-by=terraform are always set)."
  default     = {}
}

variable "deletion_protection" {
  type        = bool
  description = "Protect the Cloud Run services from `terraform destroy` (set false before a teardown)."
  default     = true
}

# ---------------------------------------------------------------------------------------
# Images and registry
# ---------------------------------------------------------------------------------------

variable "dispatcher_image" {
  type        = string
  description = "Dispatcher image used when the service is created, e.g. REGION-docker.pkg.dev/PROJECT/scrapejobs/dispatcher:COMMIT_SHA. Later rollouts are done by Cloud Build (`gcloud run deploy`); Terraform ignores changes of this value afterwards."

  validation {
    condition     = can(regex("^[^:@]+(:[A-Za-z0-9_][A-Za-z0-9_.-]{0,127}|@sha256:[a-f0-9]{64})$", var.dispatcher_image)) && !endswith(var.dispatcher_image, ":latest")
    error_message = "dispatcher_image must be pinned by a tag other than latest (e.g. the commit SHA) or by a sha256 digest."
  }
}

variable "worker_image" {
  type        = string
  description = "Worker image used when the service is created, e.g. REGION-docker.pkg.dev/PROJECT/scrapejobs/worker:COMMIT_SHA. Later rollouts are done by Cloud Build (`gcloud run deploy`); Terraform ignores changes of this value afterwards."

  validation {
    condition     = can(regex("^[^:@]+(:[A-Za-z0-9_][A-Za-z0-9_.-]{0,127}|@sha256:[a-f0-9]{64})$", var.worker_image)) && !endswith(var.worker_image, ":latest")
    error_message = "worker_image must be pinned by a tag other than latest (e.g. the commit SHA) or by a sha256 digest."
  }
}

variable "renderer_image" {
  type        = string
  description = "Renderer image (the worker with Chromium: the root Dockerfile, SERVICE=worker, target renderer) used when the service is created, e.g. REGION-docker.pkg.dev/PROJECT/scrapejobs/renderer:COMMIT_SHA. Later rollouts are done by Cloud Build; Terraform ignores changes of this value afterwards."

  validation {
    condition     = can(regex("^[^:@]+(:[A-Za-z0-9_][A-Za-z0-9_.-]{0,127}|@sha256:[a-f0-9]{64})$", var.renderer_image)) && !endswith(var.renderer_image, ":latest")
    error_message = "renderer_image must be pinned by a tag other than latest (e.g. the commit SHA) or by a sha256 digest."
  }
}

variable "artifact_registry_repository" {
  type        = string
  description = "ID of the Docker repository in Artifact Registry (the _REPOSITORY substitution of cloudbuild.yaml)."
  default     = "scrapejobs"

  validation {
    condition     = can(regex("^[a-z]([a-z0-9-]{0,61}[a-z0-9])?$", var.artifact_registry_repository))
    error_message = "artifact_registry_repository must be lowercase letters, digits and hyphens, starting with a letter."
  }
}

variable "artifact_registry_immutable_tags" {
  type        = bool
  description = "Make image tags immutable. Safer, but re-running a build for the same commit then fails at the push."
  default     = false
}

variable "artifact_registry_keep_count" {
  type        = number
  description = "Number of most recent image versions per package that cleanup policies never delete (rollback targets)."
  default     = 20

  validation {
    condition     = var.artifact_registry_keep_count >= 1
    error_message = "artifact_registry_keep_count must be at least 1."
  }
}

variable "artifact_registry_retention_days" {
  type        = number
  description = "Images older than this (and not among the most recent artifact_registry_keep_count) are deleted."
  default     = 90

  validation {
    condition     = var.artifact_registry_retention_days >= 7
    error_message = "artifact_registry_retention_days must be at least 7."
  }
}

variable "create_build_service_account" {
  type        = bool
  description = "Create a dedicated Cloud Build service account allowed to push images and deploy the two services (pass it to `gcloud builds submit --service-account` or a trigger)."
  default     = true
}

# ---------------------------------------------------------------------------------------
# Messaging topology: defaults MUST equal shared/src/scrapejobs_shared/messaging/topology.py
# (tests/deploy/test_topology_drift.py).
# ---------------------------------------------------------------------------------------

variable "task_topic" {
  type        = string
  description = "Pub/Sub topic carrying task messages, one per batch of up to task_batch_size URLs (SCRAPEJOBS_TASK_TOPIC)."
  default     = "scrape-tasks"

  validation {
    condition     = can(regex("^[A-Za-z][A-Za-z0-9._~%+-]{2,254}$", var.task_topic)) && !startswith(lower(var.task_topic), "goog")
    error_message = "task_topic must be a valid Pub/Sub resource name."
  }
}

variable "dead_letter_topic" {
  type        = string
  description = "Pub/Sub topic receiving tasks that exhausted max_delivery_attempts."
  default     = "scrape-tasks-dead"

  validation {
    condition     = can(regex("^[A-Za-z][A-Za-z0-9._~%+-]{2,254}$", var.dead_letter_topic)) && !startswith(lower(var.dead_letter_topic), "goog")
    error_message = "dead_letter_topic must be a valid Pub/Sub resource name."
  }
}

variable "task_subscription" {
  type        = string
  description = "Push subscription delivering task_topic to the worker's /pubsub/push."
  default     = "scrape-tasks-push"

  validation {
    condition     = can(regex("^[A-Za-z][A-Za-z0-9._~%+-]{2,254}$", var.task_subscription)) && !startswith(lower(var.task_subscription), "goog")
    error_message = "task_subscription must be a valid Pub/Sub resource name."
  }
}

variable "dead_letter_subscription" {
  type        = string
  description = "Push subscription delivering dead_letter_topic to the worker's /pubsub/dead-letter."
  default     = "scrape-tasks-dead-push"

  validation {
    condition     = can(regex("^[A-Za-z][A-Za-z0-9._~%+-]{2,254}$", var.dead_letter_subscription)) && !startswith(lower(var.dead_letter_subscription), "goog")
    error_message = "dead_letter_subscription must be a valid Pub/Sub resource name."
  }
}

# Priority lanes: defaults MUST equal topology.LANES (tests/deploy/test_topology_drift.py).
variable "lanes" {
  type        = list(string)
  description = "Priority lanes, each with its own task topic, dead-letter topic and their two push subscriptions (topology.LANES). The normal lane keeps the base names (task_topic, dead_letter_topic, task_subscription, dead_letter_subscription); every other lane appends -<lane> (scrape-tasks-high, scrape-tasks-push-high, ...)."
  default     = ["high", "normal", "low", "render", "processing", "documents"]

  validation {
    condition     = contains(var.lanes, "normal")
    error_message = "lanes must contain \"normal\" (the lane of jobs without a priority, keeping the base names)."
  }

  validation {
    condition     = length(distinct(var.lanes)) == length(var.lanes) && alltrue([for lane in var.lanes : can(regex("^[a-z][a-z0-9]{0,15}$", lane))])
    error_message = "lanes must be distinct lower-case names of letters and digits (at most 16 characters)."
  }

  validation {
    condition     = !contains(var.lanes, "shared")
    error_message = "\"shared\" is the key of the shared worker service and cannot be a lane."
  }

  validation {
    condition     = contains(var.lanes, "render")
    error_message = "lanes must contain \"render\" (jobs with options.render travel in it, to the renderer)."
  }
}

variable "dedicated_lane_workers" {
  type = map(object({
    max_instances = number
    min_instances = optional(number, 0)
    cpu           = optional(string)
    memory        = optional(string)
  }))
  description = "Lanes that get their own worker service (<prefix>-worker-<lane>: same image, environment, service account and settings as the shared worker, with these instance counts, and cpu/memory when given, else worker_cpu/worker_memory); both subscriptions of such a lane push to it. Lanes not listed here push to the shared worker. {} (default) = one shared worker for every lane. A documents lane of its own: { documents = { max_instances = 10, memory = \"4Gi\" } }."
  default     = {}

  validation {
    condition     = alltrue([for lane, w in var.dedicated_lane_workers : w.max_instances >= 1 && w.min_instances >= 0 && w.min_instances <= w.max_instances])
    error_message = "Each dedicated_lane_workers entry needs max_instances >= 1 and 0 <= min_instances <= max_instances."
  }

  validation {
    condition     = !contains(keys(var.dedicated_lane_workers), "render")
    error_message = "The render lane always has its own service, the renderer (renderer_* variables)."
  }
}

variable "min_backoff_s" {
  type        = number
  description = "Minimum Pub/Sub redelivery backoff in seconds after a nack."
  default     = 10

  validation {
    condition     = var.min_backoff_s >= 0 && var.min_backoff_s <= 600 && floor(var.min_backoff_s) == var.min_backoff_s
    error_message = "min_backoff_s must be a whole number between 0 and 600."
  }
}

variable "max_backoff_s" {
  type        = number
  description = "Maximum Pub/Sub redelivery backoff in seconds (must be >= min_backoff_s)."
  default     = 600

  validation {
    condition     = var.max_backoff_s >= 0 && var.max_backoff_s <= 600 && floor(var.max_backoff_s) == var.max_backoff_s
    error_message = "max_backoff_s must be a whole number between 0 and 600."
  }
}

variable "max_delivery_attempts" {
  type        = number
  description = "Deliveries of a task before Pub/Sub forwards it to dead_letter_topic."
  default     = 5

  validation {
    condition     = var.max_delivery_attempts >= 5 && var.max_delivery_attempts <= 100 && floor(var.max_delivery_attempts) == var.max_delivery_attempts
    error_message = "max_delivery_attempts must be a whole number between 5 and 100 (Pub/Sub limits)."
  }
}

variable "ack_deadline_s" {
  type        = number
  description = "Ack deadline in seconds of both push subscriptions: the time the worker has to answer a push. worker_request_timeout_s may not exceed it."
  default     = 60

  validation {
    condition     = var.ack_deadline_s >= 10 && var.ack_deadline_s <= 600 && floor(var.ack_deadline_s) == var.ack_deadline_s
    error_message = "ack_deadline_s must be a whole number between 10 and 600."
  }
}

# ---------------------------------------------------------------------------------------
# Firestore
# ---------------------------------------------------------------------------------------

variable "firestore_database" {
  type        = string
  description = "Firestore database ID used by the services (SCRAPEJOBS_FIRESTORE_DATABASE)."
  default     = "(default)"

  validation {
    condition     = var.firestore_database == "(default)" || can(regex("^[a-z][a-z0-9-]{2,61}[a-z0-9]$", var.firestore_database))
    error_message = "firestore_database must be \"(default)\" or 4-63 lowercase letters, digits and hyphens."
  }
}

variable "identity_database" {
  type        = string
  description = "Firestore database ID of the dispatcher's identities: API keys and signed-out dashboard sessions (SCRAPEJOBS_IDENTITY_DATABASE). Only the dispatcher's service account may use it; the worker and renderer are held to firestore_database."
  default     = "scrapejobs-identities"

  validation {
    condition     = can(regex("^[a-z][a-z0-9-]{2,61}[a-z0-9]$", var.identity_database))
    error_message = "identity_database must be 4-63 lowercase letters, digits and hyphens (a named database, never (default))."
  }
}

variable "firestore_location" {
  type        = string
  description = "Firestore location (a region such as us-central1 or a multi-region such as nam5/eur3). Defaults to var.region. Cannot be changed after creation."
  default     = null
}

variable "create_firestore_database" {
  type        = bool
  description = "Create the Firestore databases (firestore_database and identity_database). Set false if they already exist (e.g. a (default) database created earlier) or import it instead."
  default     = true
}

variable "firestore_point_in_time_recovery" {
  type        = bool
  description = "Enable Firestore point-in-time recovery (7 days of versions; billed as extra storage)."
  default     = true
}

variable "firestore_delete_protection" {
  type        = bool
  description = "Enable Firestore delete protection (the database cannot be deleted until this is turned off)."
  default     = true
}

variable "retention_days" {
  type        = number
  description = "Days jobs, tasks, host state and scheduler dedup keys are kept: the services set expire_at = now + retention_days and Firestore TTL deletes the documents (SCRAPEJOBS_RETENTION_DAYS)."
  default     = 30

  validation {
    condition     = var.retention_days >= 1 && var.retention_days <= 3650 && floor(var.retention_days) == var.retention_days
    error_message = "retention_days must be a whole number between 1 and 3650."
  }
}

# ---------------------------------------------------------------------------------------
# Services (shared)
# ---------------------------------------------------------------------------------------

variable "log_level" {
  type        = string
  description = "Log level of both services (SCRAPEJOBS_LOG_LEVEL)."
  default     = "INFO"

  validation {
    condition     = contains(["DEBUG", "INFO", "WARNING", "ERROR", "CRITICAL"], var.log_level)
    error_message = "log_level must be one of DEBUG, INFO, WARNING, ERROR, CRITICAL."
  }
}

variable "telemetry_exporter" {
  type        = string
  description = "Where both services send spans and metrics (SCRAPEJOBS_TELEMETRY_EXPORTER): \"gcp\" = Cloud Trace and Cloud Monitoring (the runtime accounts get roles/cloudtrace.agent and roles/monitoring.metricWriter); \"otlp\" = an OTLP/HTTP collector (set OTEL_EXPORTER_OTLP_ENDPOINT yourself); \"none\" = off."
  default     = "gcp"

  validation {
    condition     = contains(["none", "otlp", "gcp"], var.telemetry_exporter)
    error_message = "telemetry_exporter must be one of none, otlp, gcp (console is for local development)."
  }
}

variable "telemetry_trace_ratio" {
  type        = number
  description = "Fraction of traces recorded (SCRAPEJOBS_TELEMETRY_TRACE_RATIO), decided by trace id so both services keep the same traces. Cloud Trace bills per span: a page costs one (its fetch) plus about five per batch."
  default     = 1.0

  validation {
    condition     = var.telemetry_trace_ratio >= 0 && var.telemetry_trace_ratio <= 1
    error_message = "telemetry_trace_ratio must be between 0 and 1."
  }
}

# ---------------------------------------------------------------------------------------
# Dispatcher
# ---------------------------------------------------------------------------------------

variable "dispatcher_auth_mode" {
  type        = string
  description = "How API callers authenticate (SCRAPEJOBS_AUTH_MODE): \"iam\" = private service, Cloud Run IAM validates Google identity tokens of dispatcher_invokers at the edge; \"api_key\" = public service, the app checks X-API-Key against SHA-256 hashes from Secret Manager. \"none\" is for local development only and is rejected here."
  default     = "iam"

  validation {
    condition     = contains(["iam", "api_key"], var.dispatcher_auth_mode)
    error_message = "dispatcher_auth_mode must be \"iam\" or \"api_key\"."
  }
}

variable "dispatcher_identities" {
  type = map(object({
    tenant = string
    role   = string
  }))
  description = "iam mode: the tenant and role of each Google identity (e-mail of a user or service account) that calls the dispatcher; role = member (its tenant's work), admin (everything, keys, quotas) or scheduler. The scheduler's own service account is added as scheduler. Identities not named are dispatcher_default_role in dispatcher_default_tenant (docs/operations.md, Tenants)."
  default     = {}

  validation {
    condition = alltrue([
      for email, who in var.dispatcher_identities :
      contains(["member", "admin", "scheduler"], who.role) && can(regex("^[a-z0-9][a-z0-9_-]{0,62}$", who.tenant))
    ])
    error_message = "Every dispatcher_identities entry needs a role of member, admin or scheduler and a tenant of 1-63 lowercase letters, digits, hyphens or underscores."
  }
}

variable "dispatcher_iap_audience" {
  type        = string
  default     = ""
  description = "iam mode behind Identity-Aware Proxy: the audience of IAP's signed assertions. Empty: with dispatcher_iap_members set, the dispatcher's own service (/projects/NUMBER/locations/REGION/services/NAME, IAP on Cloud Run); set it for IAP on a load balancer (/projects/NUMBER/global/backendServices/ID). A person's identity is only ever taken from an assertion verified against it."

  validation {
    condition     = var.dispatcher_iap_audience == "" || can(regex("^/projects/[0-9]+/(global/backendServices/[0-9]+|apps/[a-z][a-z0-9-]+|locations/[a-z0-9-]+/services/[a-z0-9-]+)$", var.dispatcher_iap_audience))
    error_message = "dispatcher_iap_audience must be empty, /projects/NUMBER/locations/REGION/services/NAME, /projects/NUMBER/global/backendServices/ID or /projects/NUMBER/apps/PROJECT."
  }
}

variable "dispatcher_default_tenant" {
  type        = string
  description = "iam mode: the tenant of a Google identity dispatcher_identities does not name."
  default     = "default"

  validation {
    condition     = can(regex("^[a-z0-9][a-z0-9_-]{0,62}$", var.dispatcher_default_tenant))
    error_message = "dispatcher_default_tenant must be 1-63 lowercase letters, digits, hyphens or underscores."
  }
}

variable "dispatcher_default_role" {
  type        = string
  description = "iam mode: the role of a Google identity dispatcher_identities does not name (member sees only its tenant's work; admin sees and runs everything)."
  default     = "member"

  validation {
    condition     = contains(["member", "admin"], var.dispatcher_default_role)
    error_message = "dispatcher_default_role must be member or admin."
  }
}

variable "host_window_batches" {
  type        = number
  description = "A job's batches of one host in Pub/Sub at once; the rest wait in Firestore and the workers release them as earlier ones finish, so another tenant's work on that host never waits behind the whole job (0 = publish all at once)."
  default     = 2

  validation {
    condition     = var.host_window_batches >= 0 && var.host_window_batches <= 1000 && floor(var.host_window_batches) == var.host_window_batches
    error_message = "host_window_batches must be a whole number from 0 to 1000."
  }
}

variable "tenant_pages_per_day" {
  type        = number
  description = "Pages each tenant may fetch per UTC day unless an admin set its own (PUT /v1/tenants/{tenant}); 0 = no limit. Past it a submission is a 429 with Retry-After."
  default     = 0

  validation {
    condition     = var.tenant_pages_per_day >= 0 && floor(var.tenant_pages_per_day) == var.tenant_pages_per_day
    error_message = "tenant_pages_per_day must be a whole number, 0 or more."
  }
}

variable "tenant_pages_in_flight" {
  type        = number
  description = "Pages each tenant may have fetched at once across every worker unless set per tenant (PUT /v1/tenants/{tenant}); 0 = no limit."
  default     = 0

  validation {
    condition     = var.tenant_pages_in_flight >= 0 && floor(var.tenant_pages_in_flight) == var.tenant_pages_in_flight
    error_message = "tenant_pages_in_flight must be a whole number, 0 or more."
  }
}

variable "dispatcher_iap_members" {
  type        = list(string)
  description = "iam mode only: people (user:, group:, domain:) who reach the dispatcher and its dashboard (/ui) in a browser with their Google identity, through Identity-Aware Proxy enabled on the Cloud Run service. Empty (the default) leaves IAP off. Needs the project in an organization; see docs/deploy.md#identity-aware-proxy."
  default     = []

  validation {
    condition     = alltrue([for m in var.dispatcher_iap_members : can(regex("^(user|group|domain|serviceAccount|principal|principalSet):.+", m))])
    error_message = "dispatcher_iap_members entries must be IAM members (user:, group:, domain:, serviceAccount:, principal:, principalSet:)."
  }
}

variable "dispatcher_invokers" {
  type        = list(string)
  description = "IAM members allowed to call the dispatcher API (roles/run.invoker), e.g. [\"group:scrapers@example.com\", \"serviceAccount:ci@p.iam.gserviceaccount.com\"]. The scheduler identity is always added."
  default     = []

  validation {
    condition = alltrue([
      for m in var.dispatcher_invokers :
      can(regex("^(user|group|serviceAccount|domain|principal|principalSet):.+", m))
    ])
    error_message = "dispatcher_invokers entries must be IAM members (user:, group:, serviceAccount:, domain:, principal:, principalSet:). Use dispatcher_auth_mode = \"api_key\" for public access."
  }
}

variable "dispatcher_cpu" {
  type        = string
  description = "vCPU limit of a dispatcher instance."
  default     = "1"
}

variable "dispatcher_memory" {
  type        = string
  description = "Memory limit of a dispatcher instance (e.g. 1Gi): its API, and the process reading an upload (parse_memory_mb more at most)."
  default     = "1Gi"
}

variable "dispatcher_concurrency" {
  type        = number
  description = "Maximum concurrent requests per dispatcher instance."
  default     = 80

  validation {
    condition     = var.dispatcher_concurrency >= 1 && var.dispatcher_concurrency <= 1000
    error_message = "dispatcher_concurrency must be between 1 and 1000."
  }
}

variable "dispatcher_min_instances" {
  type        = number
  description = "Minimum dispatcher instances (0 = scale to zero; 1 avoids cold starts at a fixed cost)."
  default     = 0

  validation {
    condition     = var.dispatcher_min_instances >= 0
    error_message = "dispatcher_min_instances must be >= 0."
  }
}

variable "dispatcher_max_instances" {
  type        = number
  description = "Maximum dispatcher instances."
  default     = 5

  validation {
    condition     = var.dispatcher_max_instances >= 1
    error_message = "dispatcher_max_instances must be >= 1."
  }
}

variable "dispatcher_request_timeout_s" {
  type        = number
  description = "Cloud Run request timeout of the dispatcher in seconds (also the Cloud Scheduler attempt deadline; `POST /v1/scrape` waits at most this minus 5 s, then answers 504 naming the job)."
  default     = 60

  validation {
    condition     = var.dispatcher_request_timeout_s >= 15 && var.dispatcher_request_timeout_s <= 1800
    error_message = "dispatcher_request_timeout_s must be between 15 and 1800."
  }
}

variable "firestore_timeout_s" {
  type        = number
  default     = 5
  description = "Every Firestore call of both services, its retries included, ends within this many seconds (SCRAPEJOBS_FIRESTORE_TIMEOUT_S); past it an API request answers 503 dependency_unavailable and a push is nacked."

  validation {
    condition     = var.firestore_timeout_s > 0 && var.firestore_timeout_s <= 60
    error_message = "firestore_timeout_s must be above 0 and at most 60."
  }
}

variable "pubsub_timeout_s" {
  type        = number
  default     = 5
  description = "Every publish to Pub/Sub, its retries included, ends within this many seconds (SCRAPEJOBS_PUBSUB_TIMEOUT_S); past it an API request answers 503 dependency_unavailable."

  validation {
    condition     = var.pubsub_timeout_s > 0 && var.pubsub_timeout_s <= 60
    error_message = "pubsub_timeout_s must be above 0 and at most 60."
  }
}

variable "allow_unverified_tls" {
  type        = bool
  default     = true
  description = "Whether a job may fetch a site whose TLS certificate fails verification (options.verify_tls false; Firecrawl's skipTlsVerification, which firecrawl-py 3.0-4.54 sends on every scrape). false: such requests are refused naming SCRAPEJOBS_ALLOW_UNVERIFIED_TLS, and /v2 verifies unless told otherwise."
}

variable "proxies_secret_id" {
  type        = string
  default     = ""
  description = "An existing Secret Manager secret id holding the proxy pools (SCRAPEJOBS_PROXIES: a JSON list of {url, country, tier}, credentials in the URLs), created and versioned out of band; read by the dispatcher and the workers. Empty: no proxy, every page goes direct and a job asking for a country or stealth is refused."
}

variable "proxy_default" {
  type        = string
  default     = "direct"
  description = "With proxy pools: whether a job that asks for no proxy goes direct or through the basic pool (SCRAPEJOBS_PROXY_DEFAULT)."

  validation {
    condition     = contains(["direct", "basic"], var.proxy_default)
    error_message = "proxy_default is direct or basic."
  }
}

variable "searxng_url" {
  type        = string
  default     = ""
  description = "The SearXNG instance that answers searches (/v2/search, /v1/search; SCRAPEJOBS_SEARXNG_URL): its base URL, its settings.yml enabling the json format. Empty: a search is a 503 naming the setting."

  validation {
    condition     = can(regex("^(https?://[^\\s?#]+)?$", var.searxng_url))
    error_message = "searxng_url is an http(s) base URL, or empty."
  }
}

variable "searxng_service" {
  type        = bool
  default     = false
  description = "Run SearXNG beside the dispatcher on Cloud Run (search.tf) and search through it, the dispatcher its only caller (an ID token). Needs the secret <name_prefix>-searxng-secret versioned out of band (docs/deploy.md, \"Search\"). Leave searxng_url empty with it."
}

variable "searxng_image" {
  type        = string
  default     = "docker.io/searxng/searxng:2025.6.30-8e9ae4b"
  description = "SearXNG's image for searxng_service, pinned (its tags are dated builds); mirror it into Artifact Registry where images must come from there."

  validation {
    condition     = can(regex("^[^:@]+(:[A-Za-z0-9_][A-Za-z0-9_.-]{0,127}|@sha256:[a-f0-9]{64})$", var.searxng_image)) && !endswith(var.searxng_image, ":latest")
    error_message = "searxng_image must be pinned by a tag other than latest or by a sha256 digest."
  }
}

variable "searxng_max_instances" {
  type        = number
  default     = 3
  description = "The most SearXNG instances searxng_service runs (it scales to zero between searches)."

  validation {
    condition     = var.searxng_max_instances >= 1 && var.searxng_max_instances <= 100
    error_message = "searxng_max_instances is between 1 and 100."
  }
}

variable "search_cache_s" {
  type        = number
  default     = 120
  description = "A tenant's search is answered again from memory this long per dispatcher instance (SCRAPEJOBS_SEARCH_CACHE_S; 0: never)."

  validation {
    condition     = var.search_cache_s >= 0 && var.search_cache_s <= 3600
    error_message = "search_cache_s is between 0 and 3600."
  }
}

variable "tenant_proxies" {
  type        = bool
  default     = false
  description = "Whether tenants may have proxy pools of their own (PUT /v1/tenants/{t}/proxies, admin keys; SCRAPEJOBS_TENANT_PROXIES), which their jobs go through instead of the deployment's."
}

variable "monitors_per_tenant" {
  type        = number
  default     = 100
  description = "Monitors a tenant may keep (SCRAPEJOBS_MONITORS_PER_TENANT); one more is a 422 naming it."

  validation {
    condition     = var.monitors_per_tenant >= 1
    error_message = "monitors_per_tenant must be at least 1."
  }
}

variable "monitor_max_pages" {
  type        = number
  default     = 1000
  description = "Pages one check of a monitor may take, its URLs or its crawl's max_pages (SCRAPEJOBS_MONITOR_MAX_PAGES, 1-10000)."

  validation {
    condition     = var.monitor_max_pages >= 1 && var.monitor_max_pages <= 10000
    error_message = "monitor_max_pages must be between 1 and 10000."
  }
}

variable "max_upload_bytes" {
  type        = number
  default     = 20971520
  description = "Largest file POST /v1/parse and /v2/parse read (SCRAPEJOBS_MAX_UPLOAD_BYTES; 20 MiB): checked before it is read whole, larger ones get 413. Cloud Run takes requests of 32 MiB at most; the dispatcher's bodies, 25 MiB."

  validation {
    condition     = var.max_upload_bytes >= 1024 && var.max_upload_bytes <= 26148864
    error_message = "max_upload_bytes must be between 1024 and 26148864 (25 MiB less 64 KiB for the rest of the request)."
  }
}

variable "parse_memory_mb" {
  type        = number
  default     = 512
  description = "MiB the process reading an upload may grow by (SCRAPEJOBS_PARSE_MEMORY_MB); past them the upload fails extraction_memory. One upload is read at a time per dispatcher instance: keep it within dispatcher_memory."

  validation {
    condition     = var.parse_memory_mb >= 0 && var.parse_memory_mb <= 16384
    error_message = "parse_memory_mb must be between 0 (no limit) and 16384."
  }
}

variable "parse_queue" {
  type        = number
  default     = 4
  description = "Uploads a dispatcher instance holds at once, received, waiting or read (SCRAPEJOBS_PARSE_QUEUE): each up to max_upload_bytes in memory, so keep parse_queue x max_upload_bytes within dispatcher_memory; one more is a 503 with Retry-After, and a tenant holds at most half of them (a 429 past that)."

  validation {
    condition     = var.parse_queue >= 1 && var.parse_queue <= 64
    error_message = "parse_queue must be between 1 and 64."
  }
}

variable "zero_data_retention" {
  type        = bool
  default     = true
  description = "Whether a synchronous scrape may ask that its result not be kept (zero_data_retention on /v1/scrape, zeroDataRetention on /v2/scrape: the job is deleted once its answer is read). false: such requests are refused naming SCRAPEJOBS_ZERO_DATA_RETENTION (a deployment whose backups keep every document cannot honour it)."
}

variable "firecrawl_render" {
  type        = string
  default     = "plain"
  description = "What /v2 does with a page when no waitFor or mobile asks to render it (SCRAPEJOBS_FIRECRAWL_RENDER): plain (fetched as served; a page that shows nothing ends empty_content) or auto (rendered when it shows nothing, as Firecrawl renders every page; /v2 jobs then run in the render lane)."

  validation {
    condition     = contains(["plain", "auto"], var.firecrawl_render)
    error_message = "firecrawl_render must be plain or auto."
  }
}

variable "plan_credits" {
  type        = number
  default     = 30000000
  description = "Pages a billing period (a calendar month, UTC) may fetch, as Firecrawl's credit-usage calls report it (SCRAPEJOBS_PLAN_CREDITS; a credit is a page fetched)."

  validation {
    condition     = var.plan_credits >= 0 && floor(var.plan_credits) == var.plan_credits
    error_message = "plan_credits must be a whole number >= 0."
  }
}

variable "plan_tokens" {
  type        = number
  default     = 1000000000
  description = "Model tokens the ai stages may use a billing period, as Firecrawl's token-usage calls report it (SCRAPEJOBS_PLAN_TOKENS)."

  validation {
    condition     = var.plan_tokens >= 0 && floor(var.plan_tokens) == var.plan_tokens
    error_message = "plan_tokens must be a whole number >= 0."
  }
}

variable "dispatcher_coalesce_window_ms" {
  type        = number
  default     = 2
  description = "Small jobs (one batch, no crawl) submitted within this many milliseconds of each other are created in one Firestore commit and published as one message (SCRAPEJOBS_COALESCE_WINDOW_MS); 0 turns coalescing off."

  validation {
    condition     = var.dispatcher_coalesce_window_ms >= 0 && var.dispatcher_coalesce_window_ms <= 100
    error_message = "dispatcher_coalesce_window_ms must be between 0 and 100."
  }
}

variable "dispatcher_coalesce_busy_window_ms" {
  type        = number
  default     = 50
  description = "The coalescing window while submissions arrive faster than one per this many milliseconds (SCRAPEJOBS_COALESCE_BUSY_WINDOW_MS): more jobs per commit and per message under load."

  validation {
    condition     = var.dispatcher_coalesce_busy_window_ms >= 0 && var.dispatcher_coalesce_busy_window_ms <= 1000
    error_message = "dispatcher_coalesce_busy_window_ms must be between 0 and 1000."
  }
}

# ---------------------------------------------------------------------------------------
# Renderer: the render lane's service (headless Chromium; one browser per instance)
# ---------------------------------------------------------------------------------------

variable "renderer_cpu" {
  type        = string
  description = "vCPU limit of a renderer instance (Chromium renders on every core it gets)."
  default     = "2"
}

variable "renderer_memory" {
  type        = string
  description = "Memory limit of a renderer instance, at least 2Gi (a browser and renderer_pages pages at once)."
  default     = "2Gi"

  validation {
    condition     = can(regex("^[0-9]+Gi$", var.renderer_memory)) && try(tonumber(trimsuffix(var.renderer_memory, "Gi")) >= 2, false)
    error_message = "renderer_memory must be whole GiB, at least 2Gi (e.g. 2Gi, 4Gi)."
  }
}

variable "renderer_concurrency" {
  type        = number
  description = "Maximum concurrent push requests (batches) per renderer instance; their pages share the instance's browser."
  default     = 2

  validation {
    condition     = var.renderer_concurrency >= 1 && var.renderer_concurrency <= 16 && floor(var.renderer_concurrency) == var.renderer_concurrency
    error_message = "renderer_concurrency must be a whole number between 1 and 16."
  }
}

variable "renderer_pages" {
  type        = number
  description = "Pages one renderer instance renders at once (SCRAPEJOBS_RENDER_MAX_PAGES; also its batch concurrency); a page waiting longer than half its timeout for one is deferred, not failed."
  default     = 8

  validation {
    condition     = var.renderer_pages >= 1 && var.renderer_pages <= 64 && floor(var.renderer_pages) == var.renderer_pages
    error_message = "renderer_pages must be a whole number between 1 and 64."
  }
}

variable "renderer_min_instances" {
  type        = number
  description = "Minimum renderer instances (0 = scale to zero; a cold start launches Chromium, about a second)."
  default     = 0
}

variable "renderer_max_instances" {
  type        = number
  description = "Maximum renderer instances: caps rendered pages at once (max instances x renderer_pages) and cost."
  default     = 5

  validation {
    condition     = var.renderer_max_instances >= 1 && floor(var.renderer_max_instances) == var.renderer_max_instances
    error_message = "renderer_max_instances must be a whole number of at least 1."
  }
}

# ---------------------------------------------------------------------------------------
# Worker
# ---------------------------------------------------------------------------------------

variable "worker_cpu" {
  type        = string
  description = "vCPU limit of a worker instance."
  default     = "1"
}

variable "worker_memory" {
  type        = string
  description = "Memory limit of a worker instance (pages are parsed in memory)."
  default     = "1Gi"
}

variable "worker_concurrency" {
  type        = number
  description = "Maximum concurrent push requests (tasks) per worker instance."
  default     = 16

  validation {
    condition     = var.worker_concurrency >= 1 && var.worker_concurrency <= 1000
    error_message = "worker_concurrency must be between 1 and 1000."
  }
}

variable "worker_min_instances" {
  type        = number
  description = "Minimum worker instances (0 = scale to zero)."
  default     = 0

  validation {
    condition     = var.worker_min_instances >= 0
    error_message = "worker_min_instances must be >= 0."
  }
}

variable "worker_max_instances" {
  type        = number
  description = "Maximum worker instances: caps total crawl parallelism (max instances x worker_concurrency) and cost."
  default     = 10

  validation {
    condition     = var.worker_max_instances >= 1
    error_message = "worker_max_instances must be >= 1."
  }
}

variable "worker_request_timeout_s" {
  type        = number
  description = "Cloud Run request timeout of the worker in seconds; must not exceed ack_deadline_s."
  default     = 60

  validation {
    condition     = var.worker_request_timeout_s >= 10 && var.worker_request_timeout_s <= 600
    error_message = "worker_request_timeout_s must be between 10 and 600."
  }
}

variable "worker_fetch_timeout_s" {
  type        = number
  description = "Cap on the overall deadline of one page fetch in seconds (SCRAPEJOBS_FETCH_TIMEOUT_S); must stay well below ack_deadline_s and worker_request_timeout_s."
  default     = 30

  validation {
    condition     = var.worker_fetch_timeout_s > 0 && var.worker_fetch_timeout_s <= 50
    error_message = "worker_fetch_timeout_s must be in (0, 50] (the worker's own limit)."
  }
}

variable "worker_fetch_allowlist" {
  type        = list(string)
  description = "Networks (CIDR) the worker may fetch although they are not globally routable (SCRAPEJOBS_FETCH_ALLOWLIST, comma-joined). Keep empty in production: private, loopback and metadata addresses stay blocked."
  default     = []

  validation {
    condition     = alltrue([for n in var.worker_fetch_allowlist : can(cidrhost(n, 0))])
    error_message = "worker_fetch_allowlist entries must be CIDR networks, e.g. 10.20.0.0/16."
  }
}

variable "worker_proxy_sticky" {
  type        = bool
  default     = false
  description = "With proxy pools: a job's requests to one site go through the same proxy of its pool while that proxy is up (SCRAPEJOBS_PROXY_STICKY); false: the pool's proxies take turns."
}

variable "worker_per_host_concurrency" {
  type        = number
  description = "Concurrent fetches per target host (SCRAPEJOBS_PER_HOST_CONCURRENCY)."
  default     = 8

  validation {
    condition     = var.worker_per_host_concurrency >= 1 && var.worker_per_host_concurrency <= 256
    error_message = "worker_per_host_concurrency must be between 1 and 256."
  }
}

variable "worker_per_host_rps" {
  type        = number
  description = "Requests per second per target host (SCRAPEJOBS_PER_HOST_RPS); 0 = unlimited."
  default     = 0

  validation {
    condition     = var.worker_per_host_rps >= 0
    error_message = "worker_per_host_rps must be >= 0."
  }
}

variable "worker_warm_slot_idle_s" {
  type        = number
  description = "How long a worker keeps a host slot for its next fetch to that host after a fetch (SCRAPEJOBS_WARM_SLOT_IDLE_S); 0 gives slots back at once (a slot takes at most 4 takes in any 10 s, then rests). With cpu_idle, an idle instance gives them back at its next request or when their lease ends (<= fetch timeout + 30 s)."
  default     = 1

  validation {
    condition     = var.worker_warm_slot_idle_s >= 0 && var.worker_warm_slot_idle_s <= 30
    error_message = "worker_warm_slot_idle_s must be in [0, 30] (the worker's own limit)."
  }
}

variable "worker_document_processes" {
  type        = number
  default     = 1
  description = "Processes per worker process that read documents (PDF, Word, spreadsheets...) apart from pages, at the lowest CPU priority, so that documents never starve pages (SCRAPEJOBS_DOCUMENT_PROCESSES; 0: the page processes read them)."

  validation {
    condition     = var.worker_document_processes >= 0 && var.worker_document_processes <= 16 && floor(var.worker_document_processes) == var.worker_document_processes
    error_message = "worker_document_processes must be a whole number in [0, 16]."
  }
}

variable "worker_extraction_processes" {
  type        = number
  description = "Processes per worker process that extract pages: the first takes every page while it keeps up, the others the pages that waited 25 ms for it (SCRAPEJOBS_EXTRACTION_PROCESSES; two cost about 50 MiB a worker process, each more about 18 MiB)."
  default     = 2

  validation {
    condition     = var.worker_extraction_processes >= 0 && var.worker_extraction_processes <= 32 && floor(var.worker_extraction_processes) == var.worker_extraction_processes
    error_message = "worker_extraction_processes must be a whole number in [0, 32] (0: on the event loop, without a budget: debugging only)."
  }
}

variable "worker_extraction_memory_mb" {
  type        = number
  description = "MiB an extraction process may grow past its size at start while it extracts a page; past them the page fails extraction_memory and the process is replaced (SCRAPEJOBS_EXTRACTION_MEMORY_MB). Keep worker_extraction_processes x this within worker_memory, with room for the worker itself."
  default     = 256

  validation {
    condition     = var.worker_extraction_memory_mb >= 0 && var.worker_extraction_memory_mb <= 16384
    error_message = "worker_extraction_memory_mb must be in [0, 16384] (0: no limit)."
  }
}

variable "worker_extraction_budget_s" {
  type        = number
  description = "CPU seconds a page's extraction and pipeline may use (whole seconds, rounded up); past them its process is ended and the page fails extraction_timeout (SCRAPEJOBS_EXTRACTION_BUDGET_S)."
  default     = 10

  validation {
    condition     = var.worker_extraction_budget_s > 0 && var.worker_extraction_budget_s <= 60
    error_message = "worker_extraction_budget_s must be in (0, 60] (the worker's own limit)."
  }
}

# ---------------------------------------------------------------------------------------
# Cloud Scheduler
# ---------------------------------------------------------------------------------------

variable "schedules" {
  type = map(object({
    cron        = string
    time_zone   = optional(string, "Etc/UTC")
    body        = string
    description = optional(string)
    paused      = optional(bool, false)
    tenant      = optional(string, "default")
  }))
  description = "Recurring jobs: key = schedule name, cron = unix-cron expression, time_zone = tz database name, body = JSON object (as a string, e.g. a heredoc) POSTed to the dispatcher's /v1/jobs, tenant = the tenant the jobs belong to. A string rather than `any`, because map elements must share one type and job bodies differ."
  default     = {}

  validation {
    condition     = alltrue([for k, s in var.schedules : can(regex("^[a-z0-9][a-z0-9_-]{0,62}$", k))])
    error_message = "schedules keys must be 1-63 lowercase letters, digits, hyphens or underscores."
  }

  validation {
    condition     = alltrue([for s in var.schedules : can(keys(jsondecode(s.body)))])
    error_message = "Every schedules[*].body must be a JSON object."
  }

  validation {
    condition     = alltrue([for s in var.schedules : can(regex("^[a-z0-9][a-z0-9_-]{0,62}$", s.tenant))])
    error_message = "Every schedules[*].tenant must be 1-63 lowercase letters, digits, hyphens or underscores."
  }

  validation {
    condition     = alltrue([for s in var.schedules : length(split(" ", trimspace(s.cron))) == 5])
    error_message = "Every schedules[*].cron must be a 5-field unix-cron expression."
  }
}

variable "scheduler_region" {
  type        = string
  description = "Cloud Scheduler region (defaults to var.region; must be a Cloud Scheduler location)."
  default     = null
}

variable "scheduler_api_key" {
  type        = string
  description = "API key Cloud Scheduler sends as X-API-Key when dispatcher_auth_mode = \"api_key\" (the dispatcher then does not look at the scheduler's OIDC token). Stored in the Scheduler job and in Terraform state: use a dedicated key. Ignored in iam mode."
  default     = null
  sensitive   = true
}

variable "scheduler_retry_count" {
  type        = number
  description = "Cloud Scheduler retries of a failed trigger (the dispatcher deduplicates retried triggers)."
  default     = 3

  validation {
    condition     = var.scheduler_retry_count >= 0 && var.scheduler_retry_count <= 5
    error_message = "scheduler_retry_count must be between 0 and 5."
  }
}

# ---------------------------------------------------------------------------------------
# Monitoring
# ---------------------------------------------------------------------------------------

variable "enable_monitoring" {
  type        = bool
  description = "Create the Cloud Monitoring alert policies (dead letters, dead-letter backlog, task backlog age, dispatcher 5xx)."
  default     = true
}

variable "notification_channels" {
  type        = list(string)
  description = "Notification channel ids (projects/PROJECT/notificationChannels/ID) attached to every alert policy."
  default     = []

  validation {
    condition     = alltrue([for c in var.notification_channels : can(regex("^projects/[^/]+/notificationChannels/[^/]+$", c))])
    error_message = "notification_channels entries must look like projects/PROJECT/notificationChannels/ID."
  }
}

variable "task_backlog_age_alert_s" {
  type        = number
  description = "Alert when the oldest unacked task on task_subscription is older than this many seconds for 5 minutes."
  default     = 900

  validation {
    condition     = var.task_backlog_age_alert_s >= 60
    error_message = "task_backlog_age_alert_s must be at least 60."
  }
}

variable "dispatcher_5xx_alert_threshold" {
  type        = number
  description = "Alert when the dispatcher returns more than this many 5xx responses in 5 minutes."
  default     = 5

  validation {
    condition     = var.dispatcher_5xx_alert_threshold >= 0
    error_message = "dispatcher_5xx_alert_threshold must be >= 0."
  }
}

variable "task_batch_size" {
  type        = number
  default     = 100
  description = "URLs per task message (SCRAPEJOBS_BATCH_SIZE on the dispatcher): a batch is claimed once and its results are committed together; see bench/README.md for how the default was chosen."

  validation {
    condition     = var.task_batch_size >= 1 && var.task_batch_size <= 500 && floor(var.task_batch_size) == var.task_batch_size
    error_message = "task_batch_size must be a whole number between 1 and 500."
  }
}

variable "worker_batch_concurrency" {
  type        = number
  default     = 8
  description = "Tasks of one batch fetched at once by a worker (SCRAPEJOBS_BATCH_CONCURRENCY); per-host limits still apply across all instances."

  validation {
    condition     = var.worker_batch_concurrency >= 1 && var.worker_batch_concurrency <= 256 && floor(var.worker_batch_concurrency) == var.worker_batch_concurrency
    error_message = "worker_batch_concurrency must be a whole number between 1 and 256."
  }
}

variable "webhook_topic" {
  type        = string
  description = "Topic of job webhook events (job.completed, job.failed, job.cancelled)."
  default     = "scrape-webhooks"

  validation {
    condition     = can(regex("^[A-Za-z][A-Za-z0-9._~%+-]{2,254}$", var.webhook_topic)) && !startswith(lower(var.webhook_topic), "goog")
    error_message = "webhook_topic must be a valid Pub/Sub resource name."
  }
}

variable "webhook_subscription" {
  type        = string
  description = "Push subscription delivering webhook_topic to the worker's /pubsub/webhook."
  default     = "scrape-webhooks-push"

  validation {
    condition     = can(regex("^[A-Za-z][A-Za-z0-9._~%+-]{2,254}$", var.webhook_subscription)) && !startswith(lower(var.webhook_subscription), "goog")
    error_message = "webhook_subscription must be a valid Pub/Sub resource name."
  }
}

variable "webhook_dead_letter_topic" {
  type        = string
  description = "Where webhook events go after max_delivery_attempts failed deliveries (kept 7 days)."
  default     = "scrape-webhooks-dead"

  validation {
    condition     = can(regex("^[A-Za-z][A-Za-z0-9._~%+-]{2,254}$", var.webhook_dead_letter_topic)) && !startswith(lower(var.webhook_dead_letter_topic), "goog")
    error_message = "webhook_dead_letter_topic must be a valid Pub/Sub resource name."
  }
}

variable "webhook_signing_secret_id" {
  type        = string
  description = "Secret Manager secret id holding the deployment's comma-separated whsec_ webhook signing keys (SCRAPEJOBS_WEBHOOK_SECRETS), created and versioned out of band; empty: only jobs with their own secret are signed."
  default     = ""
}

# ---------------------------------------------------------------------------------------
# The ai stage (terraform/ai.tf)
# ---------------------------------------------------------------------------------------

variable "ai_provider" {
  type        = string
  description = "Who answers ai stages (SCRAPEJOBS_AI_PROVIDER): \"vertex\" (Gemini on Vertex AI, the worker's identity), \"openai\" (any OpenAI-compatible server at ai_base_url), or \"\" (ai stages are refused with a 422)."
  default     = ""

  validation {
    condition     = contains(["", "openai", "vertex"], var.ai_provider)
    error_message = "ai_provider must be \"\", \"openai\" or \"vertex\"."
  }
}

variable "ai_model" {
  type        = string
  description = "The model ai stages use unless they name one (SCRAPEJOBS_AI_MODEL), e.g. gemini-2.5-flash."
  default     = ""
}

variable "ai_models" {
  type        = list(string)
  description = "Other models an ai stage may name (SCRAPEJOBS_AI_MODELS); with ai_model the only ones offered, a stage naming another is refused with a 422. Both empty: any model the provider serves."
  default     = []
}

variable "ai_base_url" {
  type        = string
  description = "openai: the server's base URL, e.g. https://api.openai.com/v1 (SCRAPEJOBS_AI_BASE_URL)."
  default     = ""
}

variable "ai_location" {
  type        = string
  description = "vertex: the model's region (SCRAPEJOBS_AI_LOCATION)."
  default     = "us-central1"
}

variable "ai_max_in_flight" {
  type        = number
  description = "Model calls at once across every worker instance (SCRAPEJOBS_AI_MAX_IN_FLIGHT)."
  default     = 8

  validation {
    condition     = var.ai_max_in_flight >= 1 && var.ai_max_in_flight <= 1000
    error_message = "ai_max_in_flight must be between 1 and 1000."
  }
}

variable "ai_price_per_mtok_in" {
  type        = number
  description = "The price of a million input tokens (SCRAPEJOBS_AI_PRICE_PER_MTOK_IN), in your billing currency: with either price set, jobs, /v1/stats and the dashboard show what model calls cost; null: no cost shown."
  default     = null

  validation {
    condition     = coalesce(var.ai_price_per_mtok_in, 0) >= 0
    error_message = "ai_price_per_mtok_in must be at least 0."
  }
}

variable "ai_price_per_mtok_out" {
  type        = number
  description = "The price of a million output tokens (SCRAPEJOBS_AI_PRICE_PER_MTOK_OUT); see ai_price_per_mtok_in."
  default     = null

  validation {
    condition     = coalesce(var.ai_price_per_mtok_out, 0) >= 0
    error_message = "ai_price_per_mtok_out must be at least 0."
  }
}

variable "ai_api_key_secret_id" {
  type        = string
  description = "openai: an existing Secret Manager secret id holding the server's API key (SCRAPEJOBS_AI_API_KEY), created and versioned out of band; empty: no key."
  default     = ""
}

variable "api_url" {
  type        = string
  description = "The dispatcher's URL as its callers reach it (a custom domain, a load balancer); the URLs of screenshots are under it. Empty: the dispatcher's own run.app URL."
  default     = ""

  validation {
    condition     = var.api_url == "" || can(regex("^https://[^/?#]+(/[^?#]*)?$", var.api_url))
    error_message = "api_url must be empty or an https:// URL without query or fragment."
  }
}

variable "actions_max" {
  type        = number
  description = "Browser actions a page may ask for (SCRAPEJOBS_ACTIONS_MAX; more: a 422 naming options.render.actions)."
  default     = 20

  validation {
    condition     = var.actions_max >= 1 && var.actions_max <= 50 && floor(var.actions_max) == var.actions_max
    error_message = "actions_max must be a whole number between 1 and 50."
  }
}

variable "actions_max_wait_ms" {
  type        = number
  description = "What a page's wait actions may add up to, in milliseconds (SCRAPEJOBS_ACTIONS_MAX_WAIT_MS)."
  default     = 30000

  validation {
    condition     = var.actions_max_wait_ms >= 0 && var.actions_max_wait_ms <= 60000 && floor(var.actions_max_wait_ms) == var.actions_max_wait_ms
    error_message = "actions_max_wait_ms must be a whole number between 0 and 60000."
  }
}

variable "actions_max_script_chars" {
  type        = number
  description = "The longest script an executeJavascript action may run, in characters (SCRAPEJOBS_ACTIONS_MAX_SCRIPT_CHARS)."
  default     = 10000

  validation {
    condition     = var.actions_max_script_chars >= 1 && var.actions_max_script_chars <= 100000 && floor(var.actions_max_script_chars) == var.actions_max_script_chars
    error_message = "actions_max_script_chars must be a whole number between 1 and 100000."
  }
}

variable "actions_script_timeout_s" {
  type        = number
  description = "How long an executeJavascript action's script may run on the renderer, in seconds (SCRAPEJOBS_ACTIONS_SCRIPT_TIMEOUT_S); past it the page fails action_failed."
  default     = 5

  validation {
    condition     = var.actions_script_timeout_s > 0 && var.actions_script_timeout_s <= 60
    error_message = "actions_script_timeout_s must be above 0 and at most 60."
  }
}

variable "actions_max_pdf_pages" {
  type        = number
  description = "Pages a pdf action prints at most, the first ones (SCRAPEJOBS_ACTIONS_MAX_PDF_PAGES)."
  default     = 100

  validation {
    condition     = var.actions_max_pdf_pages >= 1 && var.actions_max_pdf_pages <= 1000
    error_message = "actions_max_pdf_pages must be between 1 and 1000."
  }
}

# ---------------------------------------------------------------------------------------
# OCR (scans and images: docs/api.md, "Documents")
# ---------------------------------------------------------------------------------------

variable "ocr" {
  type = object({
    max_pages     = optional(number, 50)
    page_budget_s = optional(number, 10)
    max_pixels    = optional(number, 40000000)
    page_weight   = optional(number, 1)
  })
  description = "OCR's bounds, both services (the worker's pages, the dispatcher's uploads): pages of one document read by OCR (SCRAPEJOBS_OCR_MAX_PAGES; 0: none), CPU seconds each may use beside the document's budget (SCRAPEJOBS_OCR_PAGE_BUDGET_S), pixels of an image, checked from its header before it is decoded (SCRAPEJOBS_OCR_MAX_PIXELS), credits a page read by OCR costs beside the page's own (SCRAPEJOBS_OCR_PAGE_WEIGHT)."
  default     = {}

  validation {
    condition = (
      var.ocr.max_pages >= 0 && var.ocr.max_pages <= 2000 && floor(var.ocr.max_pages) == var.ocr.max_pages
      && var.ocr.page_budget_s > 0 && var.ocr.page_budget_s <= 120
      && var.ocr.max_pixels >= 1000000 && var.ocr.max_pixels <= 200000000
      && var.ocr.page_weight >= 0 && var.ocr.page_weight <= 100 && floor(var.ocr.page_weight) == var.ocr.page_weight
    )
    error_message = "ocr: max_pages in [0, 2000], page_budget_s in (0, 120], max_pixels in [1e6, 2e8], page_weight in [0, 100] (whole numbers but the budget)."
  }
}
