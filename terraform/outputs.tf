output "dispatcher_url" {
  description = "Base URL of the dispatcher REST API (POST /v1/jobs, GET /healthz)."
  value       = google_cloud_run_v2_service.dispatcher.uri
}

output "searxng_url" {
  description = "Base URL of the SearXNG service searxng_service runs (private: the dispatcher is its only caller); empty without it."
  value       = var.searxng_service ? google_cloud_run_v2_service.searxng[0].uri : ""
}

output "worker_url" {
  description = "Base URL of the shared worker (private: only Pub/Sub pushes reach it)."
  value       = google_cloud_run_v2_service.worker["shared"].uri
}

output "worker_push_audience" {
  description = "Audience of the OIDC tokens Pub/Sub attaches to pushes to the shared worker (its SCRAPEJOBS_PUSH_AUDIENCE)."
  value       = local.worker_audience
}

output "dispatcher_service_name" {
  description = "Cloud Run service name of the dispatcher (the _DISPATCHER_SERVICE substitution of cloudbuild.yaml)."
  value       = google_cloud_run_v2_service.dispatcher.name
}

output "worker_service_name" {
  description = "Cloud Run service name of the shared worker (the _WORKER_SERVICE substitution of cloudbuild.yaml)."
  value       = google_cloud_run_v2_service.worker["shared"].name
}

output "task_topic" {
  description = "Name of the task topic of the normal lane (lane_task_topics has every lane)."
  value       = google_pubsub_topic.tasks["normal"].name
}

output "dead_letter_topic" {
  description = "Name of the dead-letter topic of the normal lane (lane_dead_letter_topics has every lane)."
  value       = google_pubsub_topic.dead_letter["normal"].name
}

output "task_subscription" {
  description = "Name of the push subscription delivering the normal lane's tasks (lane_task_subscriptions has every lane)."
  value       = google_pubsub_subscription.tasks["normal"].name
}

output "dead_letter_subscription" {
  description = "Name of the push subscription delivering the normal lane's dead letters (lane_dead_letter_subscriptions has every lane)."
  value       = google_pubsub_subscription.dead_letter["normal"].name
}

output "lane_task_topics" {
  description = "Task topic name by lane."
  value       = { for lane, topic in google_pubsub_topic.tasks : lane => topic.name }
}

output "lane_dead_letter_topics" {
  description = "Dead-letter topic name by lane."
  value       = { for lane, topic in google_pubsub_topic.dead_letter : lane => topic.name }
}

output "lane_task_subscriptions" {
  description = "Task push subscription name by lane."
  value       = { for lane, sub in google_pubsub_subscription.tasks : lane => sub.name }
}

output "lane_dead_letter_subscriptions" {
  description = "Dead-letter push subscription name by lane."
  value       = { for lane, sub in google_pubsub_subscription.dead_letter : lane => sub.name }
}

output "lane_worker_services" {
  description = "Cloud Run service name of the worker each lane pushes to (the shared worker unless the lane is in dedicated_lane_workers)."
  value       = { for lane, key in local.lane_worker : lane => google_cloud_run_v2_service.worker[key].name }
}

output "worker_service_names" {
  description = "Every worker service name by key (\"shared\" and each dedicated lane; not the renderer, see renderer_service_name): Cloud Build must roll out the worker image to each of them."
  value       = { for key, worker in google_cloud_run_v2_service.worker : key => worker.name if local.worker_services[key].role == "worker" }
}

output "artifact_registry_repository_url" {
  description = "Docker repository URL; images are <url>/dispatcher:<sha>, <url>/worker:<sha> and <url>/renderer:<sha>."
  value       = "${google_artifact_registry_repository.images.location}-docker.pkg.dev/${var.project_id}/${google_artifact_registry_repository.images.repository_id}"
}

output "firestore_database" {
  description = "Firestore database ID used by the services."
  value       = var.firestore_database
}

output "dispatcher_service_account" {
  description = "Email of the dispatcher runtime service account."
  value       = google_service_account.dispatcher.email
}

output "worker_service_account" {
  description = "Email of the worker runtime service account."
  value       = google_service_account.worker.email
}

output "push_invoker_service_account" {
  description = "Email of the identity in Pub/Sub push OIDC tokens (SCRAPEJOBS_PUSH_SERVICE_ACCOUNT)."
  value       = google_service_account.push_invoker.email
}

output "scheduler_service_account" {
  description = "Email of the identity in Cloud Scheduler OIDC tokens (an invoker of the dispatcher)."
  value       = google_service_account.scheduler.email
}

output "build_service_account" {
  description = "Resource name of the Cloud Build deployer service account (for `gcloud builds submit --service-account`), or null when not created."
  value       = var.create_build_service_account ? google_service_account.build[0].id : null
}

output "build_source_bucket" {
  description = "Bucket for `gcloud builds submit --gcs-source-staging-dir=gs://<bucket>/source`, or null when no build service account is created."
  value       = var.create_build_service_account ? google_storage_bucket.build_source[0].name : null
}

output "scheduler_jobs" {
  description = "Cloud Scheduler job names by schedule key."
  value       = { for k, j in google_cloud_scheduler_job.schedules : k => j.name }
}

output "api_key_hashes_secret" {
  description = "Secret Manager secret holding the comma-separated SHA-256 API key hashes (api_key mode), or null."
  value       = local.api_key_mode ? google_secret_manager_secret.api_key_hashes[0].secret_id : null
}

output "alert_policies" {
  description = "Cloud Monitoring alert policy resource names (empty when enable_monitoring = false)."
  value = compact([
    one(google_monitoring_alert_policy.dead_letters[*].name),
    one(google_monitoring_alert_policy.dead_letter_backlog[*].name),
    one(google_monitoring_alert_policy.task_backlog_age[*].name),
    one(google_monitoring_alert_policy.dispatcher_5xx[*].name),
  ])
}

output "renderer_service_name" {
  description = "Cloud Run service of the renderer, the render lane's worker with Chromium (the _RENDERER_SERVICE substitution of cloudbuild.yaml)."
  value       = google_cloud_run_v2_service.worker["render"].name
}
