# Messaging topology. Names and delivery settings default to the values in
# shared/src/scrapejobs_shared/messaging/topology.py (tests/deploy/test_topology_drift.py enforces it).
#
# One task topic, dead-letter topic and push subscription pair per priority lane
# (local.lane_names): a backlog in one lane never waits in front of another lane's work.
# The normal lane keeps the names of the single topology deployed before lanes existed; the
# moved blocks at the end of this file adopt those resources as its instances.

resource "google_pubsub_topic" "tasks" {
  #checkov:skip=CKV_GCP_83:Task messages hold job/task ids and URLs only; Google-managed encryption at rest is accepted.
  for_each = local.lanes

  project = var.project_id
  name    = local.lane_names[each.key].task_topic

  labels = { lane = each.key }

  message_retention_duration = "86400s"

  depends_on = [google_project_service.apis]
}

resource "google_pubsub_topic" "dead_letter" {
  #checkov:skip=CKV_GCP_83:Dead-lettered messages are the same task envelopes; Google-managed encryption at rest is accepted.
  for_each = local.lanes

  project = var.project_id
  name    = local.lane_names[each.key].dead_letter_topic

  labels = { lane = each.key }

  # Keep dead letters replayable for a week (Pub/Sub seek) even once they were acknowledged.
  message_retention_duration = "604800s"

  depends_on = [google_project_service.apis]
}

# Pushes every task of a lane to the lane's worker (local.lane_worker: the shared worker
# unless the lane is in dedicated_lane_workers). The worker answers 2xx to ack, anything else
# to nack; Pub/Sub then backs off (retry_policy) and after max_delivery_attempts forwards the
# message to the lane's dead-letter topic.
resource "google_pubsub_subscription" "tasks" {
  for_each = local.lanes

  project = var.project_id
  name    = local.lane_names[each.key].task_subscription
  topic   = google_pubsub_topic.tasks[each.key].id

  labels = { lane = each.key }

  # The worker's request timeout is capped at this value (see the precondition on the
  # worker service), so Pub/Sub never redelivers a message the worker is still handling.
  ack_deadline_seconds       = var.ack_deadline_s
  message_retention_duration = "604800s"
  retain_acked_messages      = false

  push_config {
    push_endpoint = "${google_cloud_run_v2_service.worker[local.lane_worker[each.key]].uri}/pubsub/push"

    oidc_token {
      service_account_email = google_service_account.push_invoker.email
      audience              = local.worker_audiences[local.lane_worker[each.key]]
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
    dead_letter_topic     = google_pubsub_topic.dead_letter[each.key].id
    max_delivery_attempts = var.max_delivery_attempts
  }

  # Never expire, even if the worker is idle for 31+ days.
  expiration_policy {
    ttl = ""
  }

  lifecycle {
    precondition {
      condition     = var.min_backoff_s <= var.max_backoff_s
      error_message = "min_backoff_s must not exceed max_backoff_s."
    }
  }

  depends_on = [
    google_cloud_run_v2_service_iam_member.push_invoker_invokes_worker,
    google_service_account_iam_member.pubsub_agent_mints_push_tokens,
  ]
}

# Dead letters of a lane are pushed to the dead-letter endpoint of the lane's worker, which
# marks the task as failed in Firestore so the job can complete.
resource "google_pubsub_subscription" "dead_letter" {
  for_each = local.lanes

  project = var.project_id
  name    = local.lane_names[each.key].dead_letter_subscription
  topic   = google_pubsub_topic.dead_letter[each.key].id

  labels = { lane = each.key }

  ack_deadline_seconds       = var.ack_deadline_s
  message_retention_duration = "604800s"
  retain_acked_messages      = false

  push_config {
    push_endpoint = "${google_cloud_run_v2_service.worker[local.lane_worker[each.key]].uri}/pubsub/dead-letter"

    oidc_token {
      service_account_email = google_service_account.push_invoker.email
      audience              = local.worker_audiences[local.lane_worker[each.key]]
    }

    attributes = {
      x-goog-version = "v1"
    }
  }

  retry_policy {
    minimum_backoff = "${var.min_backoff_s}s"
    maximum_backoff = "${var.max_backoff_s}s"
  }

  expiration_policy {
    ttl = ""
  }

  depends_on = [
    google_cloud_run_v2_service_iam_member.push_invoker_invokes_worker,
    google_service_account_iam_member.pubsub_agent_mints_push_tokens,
  ]
}

# The single (pre-lanes) topology becomes the normal lane, in place.
moved {
  from = google_pubsub_topic.tasks
  to   = google_pubsub_topic.tasks["normal"]
}

moved {
  from = google_pubsub_topic.dead_letter
  to   = google_pubsub_topic.dead_letter["normal"]
}

moved {
  from = google_pubsub_subscription.tasks
  to   = google_pubsub_subscription.tasks["normal"]
}

moved {
  from = google_pubsub_subscription.dead_letter
  to   = google_pubsub_subscription.dead_letter["normal"]
}
