# Least-privilege, additive IAM only: every grant is a *_iam_member on the narrowest resource
# that supports it. No *_iam_binding / *_iam_policy (they would clobber grants made outside
# this configuration) and no basic roles.

# --- dispatcher runtime ------------------------------------------------------------------

# Firestore IAM exists only at project (database) level. The dispatcher alone uses both
# databases: the scrapejobs one and its identities (API keys, signed-out sessions).
resource "google_project_iam_member" "dispatcher_datastore" {
  project = var.project_id
  role    = "roles/datastore.user"
  member  = google_service_account.dispatcher.member
}

# Every lane's task topic: jobs are published to the topic of their priority lane.
resource "google_pubsub_topic_iam_member" "dispatcher_publishes_tasks" {
  for_each = google_pubsub_topic.tasks

  project = var.project_id
  topic   = each.value.name
  role    = "roles/pubsub.publisher"
  member  = google_service_account.dispatcher.member
}

# GET /v1/health looks the task topics up to tell whether Pub/Sub can be reached
resource "google_pubsub_topic_iam_member" "dispatcher_views_tasks_topic" {
  for_each = google_pubsub_topic.tasks

  project = var.project_id
  topic   = each.value.name
  role    = "roles/pubsub.viewer"
  member  = google_service_account.dispatcher.member
}

resource "google_secret_manager_secret_iam_member" "dispatcher_reads_api_key_hashes" {
  count = local.api_key_mode ? 1 : 0

  project   = var.project_id
  secret_id = google_secret_manager_secret.api_key_hashes[0].secret_id
  role      = "roles/secretmanager.secretAccessor"
  member    = google_service_account.dispatcher.member
}

resource "google_secret_manager_secret_iam_member" "dispatcher_reads_session_key" {
  count = local.api_key_mode ? 1 : 0

  project   = var.project_id
  secret_id = google_secret_manager_secret.session_key[0].secret_id
  role      = "roles/secretmanager.secretAccessor"
  member    = google_service_account.dispatcher.member
}

# --- worker runtime ----------------------------------------------------------------------

# The scrapejobs database only: the worker can neither read nor write an API key.
resource "google_project_iam_member" "worker_datastore" {
  project = var.project_id
  role    = "roles/datastore.user"
  member  = google_service_account.worker.member

  condition {
    title       = "scrapejobs database only"
    description = "The worker reads and writes the scrapejobs Firestore database, not the dispatcher's identities."
    expression  = "resource.name == \"projects/${var.project_id}/databases/${var.firestore_database}\""
  }
}

# Crawl jobs publish the pages they discover as new tasks (in their job's lane).
resource "google_pubsub_topic_iam_member" "worker_publishes_tasks" {
  for_each = google_pubsub_topic.tasks

  project = var.project_id
  topic   = each.value.name
  role    = "roles/pubsub.publisher"
  member  = google_service_account.worker.member
}

# --- renderer runtime --------------------------------------------------------------------
# The renderer feeds hostile pages to a browser: a browser bug must not be the whole system.
# Its identity reads and writes the scrapejobs database only (an IAM condition on the
# database), publishes only to the lanes a rendered page continues in (render: its crawl
# links and deferrals; processing: its ai stage) and to the webhook outbox (webhooks.tf). It
# holds no Vertex AI role, reads no secret, and its environment has neither the webhook
# signing keys nor the AI key (cloud_run.tf): webhooks are signed and models asked by the
# shared worker, which the webhook and processing subscriptions push to.

locals {
  renderer_lanes = [for lane in ["render", "processing"] : lane if contains(var.lanes, lane)]
}

resource "google_project_iam_member" "renderer_datastore" {
  project = var.project_id
  role    = "roles/datastore.user"
  member  = google_service_account.renderer.member

  condition {
    title       = "scrapejobs database only"
    description = "The renderer reads and writes the scrapejobs Firestore database, no other."
    expression  = "resource.name == \"projects/${var.project_id}/databases/${var.firestore_database}\""
  }
}

resource "google_pubsub_topic_iam_member" "renderer_publishes_tasks" {
  for_each = toset(local.renderer_lanes)

  project = var.project_id
  topic   = google_pubsub_topic.tasks[each.value].name
  role    = "roles/pubsub.publisher"
  member  = google_service_account.renderer.member
}

# --- telemetry (every runtime) -----------------------------------------------------------
# Spans to Cloud Trace and metrics to Cloud Monitoring (SCRAPEJOBS_TELEMETRY_EXPORTER=gcp).
# Both roles exist only at project level; they write telemetry and read nothing.

resource "google_project_iam_member" "dispatcher_trace_agent" {
  count = local.telemetry_to_gcp ? 1 : 0

  project = var.project_id
  role    = "roles/cloudtrace.agent"
  member  = google_service_account.dispatcher.member
}

resource "google_project_iam_member" "dispatcher_metric_writer" {
  count = local.telemetry_to_gcp ? 1 : 0

  project = var.project_id
  role    = "roles/monitoring.metricWriter"
  member  = google_service_account.dispatcher.member
}

resource "google_project_iam_member" "worker_trace_agent" {
  count = local.telemetry_to_gcp ? 1 : 0

  project = var.project_id
  role    = "roles/cloudtrace.agent"
  member  = google_service_account.worker.member
}

resource "google_project_iam_member" "worker_metric_writer" {
  count = local.telemetry_to_gcp ? 1 : 0

  project = var.project_id
  role    = "roles/monitoring.metricWriter"
  member  = google_service_account.worker.member
}

resource "google_project_iam_member" "renderer_trace_agent" {
  count = local.telemetry_to_gcp ? 1 : 0

  project = var.project_id
  role    = "roles/cloudtrace.agent"
  member  = google_service_account.renderer.member
}

resource "google_project_iam_member" "renderer_metric_writer" {
  count = local.telemetry_to_gcp ? 1 : 0

  project = var.project_id
  role    = "roles/monitoring.metricWriter"
  member  = google_service_account.renderer.member
}

# --- invokers ----------------------------------------------------------------------------

# Every worker service (the shared one and each dedicated lane worker).
resource "google_cloud_run_v2_service_iam_member" "push_invoker_invokes_worker" {
  for_each = google_cloud_run_v2_service.worker

  project  = var.project_id
  location = each.value.location
  name     = each.value.name
  role     = "roles/run.invoker"
  member   = google_service_account.push_invoker.member
}

resource "google_cloud_run_v2_service_iam_member" "scheduler_invokes_dispatcher" {
  project  = var.project_id
  location = google_cloud_run_v2_service.dispatcher.location
  name     = google_cloud_run_v2_service.dispatcher.name
  role     = "roles/run.invoker"
  member   = google_service_account.scheduler.member
}

resource "google_cloud_run_v2_service_iam_member" "dispatcher_invokers" {
  for_each = toset(var.dispatcher_invokers)

  project  = var.project_id
  location = google_cloud_run_v2_service.dispatcher.location
  name     = google_cloud_run_v2_service.dispatcher.name
  role     = "roles/run.invoker"
  member   = each.key
}

# api_key mode only: the dispatcher is reachable without a Google identity and the
# application authenticates every request (X-API-Key against SCRAPEJOBS_API_KEY_HASHES).
# The worker never gets a public invoker.
resource "google_cloud_run_v2_service_iam_member" "dispatcher_public" {
  count = local.api_key_mode ? 1 : 0

  project  = var.project_id
  location = google_cloud_run_v2_service.dispatcher.location
  name     = google_cloud_run_v2_service.dispatcher.name
  role     = "roles/run.invoker"
  member   = "allUsers"
}

# --- Pub/Sub service agent ---------------------------------------------------------------

# Lets Pub/Sub mint OIDC tokens for the push-invoker identity. Granted on that one service
# account only, never at project level (a project-level grant would let Pub/Sub, and anyone
# able to configure a subscription, impersonate every service account in the project).
resource "google_service_account_iam_member" "pubsub_agent_mints_push_tokens" {
  service_account_id = google_service_account.push_invoker.name
  role               = "roles/iam.serviceAccountTokenCreator"
  member             = local.pubsub_service_agent

  depends_on = [google_project_service.apis]
}

# Dead-lettering: the service agent must be able to publish to each lane's dead-letter topic
# and to acknowledge (subscribe) on its source subscription, or messages are never forwarded.
resource "google_pubsub_topic_iam_member" "pubsub_agent_publishes_dead_letters" {
  for_each = google_pubsub_topic.dead_letter

  project = var.project_id
  topic   = each.value.name
  role    = "roles/pubsub.publisher"
  member  = local.pubsub_service_agent
}

resource "google_pubsub_subscription_iam_member" "pubsub_agent_subscribes_tasks" {
  for_each = google_pubsub_subscription.tasks

  project      = var.project_id
  subscription = each.value.name
  role         = "roles/pubsub.subscriber"
  member       = local.pubsub_service_agent
}

# --- Cloud Build deployer (optional) -------------------------------------------------------

resource "google_artifact_registry_repository_iam_member" "build_pushes_images" {
  count = var.create_build_service_account ? 1 : 0

  project    = var.project_id
  location   = google_artifact_registry_repository.images.location
  repository = google_artifact_registry_repository.images.name
  role       = "roles/artifactregistry.writer"
  member     = google_service_account.build[0].member
}

# A user-specified build service account must be able to write build logs.
resource "google_project_iam_member" "build_writes_logs" {
  count = var.create_build_service_account ? 1 : 0

  project = var.project_id
  role    = "roles/logging.logWriter"
  member  = google_service_account.build[0].member
}

# `gcloud run deploy --image` on the two services only.
resource "google_cloud_run_v2_service_iam_member" "build_deploys_dispatcher" {
  count = var.create_build_service_account ? 1 : 0

  project  = var.project_id
  location = google_cloud_run_v2_service.dispatcher.location
  name     = google_cloud_run_v2_service.dispatcher.name
  role     = "roles/run.developer"
  member   = google_service_account.build[0].member
}

# Every worker service: the shared one and each dedicated lane worker.
resource "google_cloud_run_v2_service_iam_member" "build_deploys_worker" {
  for_each = { for key, worker in google_cloud_run_v2_service.worker : key => worker if var.create_build_service_account }

  project  = var.project_id
  location = each.value.location
  name     = each.value.name
  role     = "roles/run.developer"
  member   = google_service_account.build[0].member
}

# With a user-specified service account, `gcloud builds submit` sources must be readable by
# it: they are staged in a dedicated bucket (--gcs-source-staging-dir, see cloud_build.tf).
resource "google_storage_bucket_iam_member" "build_reads_sources" {
  count = var.create_build_service_account ? 1 : 0

  bucket = google_storage_bucket.build_source[0].name
  role   = "roles/storage.objectViewer"
  member = google_service_account.build[0].member
}

# Deploying a revision that runs as a service account requires actAs on that account.
resource "google_service_account_iam_member" "build_acts_as_dispatcher" {
  count = var.create_build_service_account ? 1 : 0

  service_account_id = google_service_account.dispatcher.name
  role               = "roles/iam.serviceAccountUser"
  member             = google_service_account.build[0].member
}

resource "google_service_account_iam_member" "build_acts_as_worker" {
  count = var.create_build_service_account ? 1 : 0

  service_account_id = google_service_account.worker.name
  role               = "roles/iam.serviceAccountUser"
  member             = google_service_account.build[0].member
}

resource "google_service_account_iam_member" "build_acts_as_renderer" {
  count = var.create_build_service_account ? 1 : 0

  service_account_id = google_service_account.renderer.name
  role               = "roles/iam.serviceAccountUser"
  member             = google_service_account.build[0].member
}

# IAM of the single topology and worker of before lanes: adopted by the normal lane and the
# shared worker, in place.
moved {
  from = google_pubsub_topic_iam_member.dispatcher_publishes_tasks
  to   = google_pubsub_topic_iam_member.dispatcher_publishes_tasks["normal"]
}

moved {
  from = google_pubsub_topic_iam_member.dispatcher_views_tasks_topic
  to   = google_pubsub_topic_iam_member.dispatcher_views_tasks_topic["normal"]
}

moved {
  from = google_pubsub_topic_iam_member.worker_publishes_tasks
  to   = google_pubsub_topic_iam_member.worker_publishes_tasks["normal"]
}

moved {
  from = google_pubsub_topic_iam_member.pubsub_agent_publishes_dead_letters
  to   = google_pubsub_topic_iam_member.pubsub_agent_publishes_dead_letters["normal"]
}

moved {
  from = google_pubsub_subscription_iam_member.pubsub_agent_subscribes_tasks
  to   = google_pubsub_subscription_iam_member.pubsub_agent_subscribes_tasks["normal"]
}

moved {
  from = google_cloud_run_v2_service_iam_member.push_invoker_invokes_worker
  to   = google_cloud_run_v2_service_iam_member.push_invoker_invokes_worker["shared"]
}

moved {
  from = google_cloud_run_v2_service_iam_member.build_deploys_worker[0]
  to   = google_cloud_run_v2_service_iam_member.build_deploys_worker["shared"]
}
