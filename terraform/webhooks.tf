# Job webhooks (docs/api.md, "Webhooks"): the services publish each job's end event to the webhook
# topic; its push subscription calls the shared worker's /pubsub/webhook, which signs the event
# (Standard Webhooks) and POSTs it. Non-2xx answers are retried with the tasks' backoff; after
# max_delivery_attempts the event is parked on the webhook dead-letter topic for 7 days.

resource "google_pubsub_topic" "webhooks" {
  #checkov:skip=CKV_GCP_83:Webhook events hold job ids, counts and labels only; Google-managed encryption at rest is accepted.
  project = var.project_id
  name    = var.webhook_topic

  message_retention_duration = "86400s"

  depends_on = [google_project_service.apis]
}

resource "google_pubsub_topic" "webhook_dead_letter" {
  #checkov:skip=CKV_GCP_83:The same webhook events; Google-managed encryption at rest is accepted.
  project = var.project_id
  name    = var.webhook_dead_letter_topic

  message_retention_duration = "604800s"

  depends_on = [google_project_service.apis]
}

resource "google_pubsub_subscription" "webhooks" {
  project = var.project_id
  name    = var.webhook_subscription
  topic   = google_pubsub_topic.webhooks.id

  ack_deadline_seconds       = var.ack_deadline_s
  message_retention_duration = "604800s"
  retain_acked_messages      = false

  push_config {
    push_endpoint = "${google_cloud_run_v2_service.worker["shared"].uri}/pubsub/webhook"

    oidc_token {
      service_account_email = google_service_account.push_invoker.email
      audience              = local.worker_audiences["shared"]
    }

    attributes = {
      x-goog-version = "v1"
    }
  }

  retry_policy {
    minimum_backoff = "${var.min_backoff_s}s"
    maximum_backoff = "${var.max_backoff_s}s"
  }

  dead_letter_policy {
    dead_letter_topic     = google_pubsub_topic.webhook_dead_letter.id
    max_delivery_attempts = var.max_delivery_attempts
  }

  expiration_policy {
    ttl = ""
  }

  depends_on = [
    google_cloud_run_v2_service_iam_member.push_invoker_invokes_worker,
    google_service_account_iam_member.pubsub_agent_mints_push_tokens,
  ]
}

# Every runtime ends jobs (a completion in a worker or the renderer, a cancel in the
# dispatcher); only the shared worker, which the webhook subscription pushes to, signs them.
resource "google_pubsub_topic_iam_member" "services_publish_webhooks" {
  for_each = {
    dispatcher = google_service_account.dispatcher.member
    worker     = google_service_account.worker.member
    renderer   = google_service_account.renderer.member
  }

  project = var.project_id
  topic   = google_pubsub_topic.webhooks.name
  role    = "roles/pubsub.publisher"
  member  = each.value
}

resource "google_pubsub_topic_iam_member" "pubsub_agent_publishes_webhook_dead_letters" {
  project = var.project_id
  topic   = google_pubsub_topic.webhook_dead_letter.name
  role    = "roles/pubsub.publisher"
  member  = local.pubsub_service_agent
}

resource "google_pubsub_subscription_iam_member" "pubsub_agent_subscribes_webhooks" {
  project      = var.project_id
  subscription = google_pubsub_subscription.webhooks.name
  role         = "roles/pubsub.subscriber"
  member       = local.pubsub_service_agent
}

# The deployment's signing keys (for jobs without their own secret): an existing Secret
# Manager secret holding comma-separated whsec_ keys, created and versioned out of band so the
# keys never land in Terraform state (docs/deploy.md). Unset: only jobs with a secret are
# signed; the others' events end failed ("no signing key").
resource "google_secret_manager_secret_iam_member" "worker_reads_webhook_keys" {
  count = var.webhook_signing_secret_id == "" ? 0 : 1

  project   = var.project_id
  secret_id = var.webhook_signing_secret_id
  role      = "roles/secretmanager.secretAccessor"
  member    = google_service_account.worker.member
}
