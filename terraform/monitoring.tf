# Alerting for the asynchronous path. Notification channels are created outside this
# configuration (console or google_monitoring_notification_channel) and passed by id.

locals {
  alert_documentation_footer = "Runbook: docs/deploy.md (\"Operations\"). Project ${var.project_id}."

  # The Pub/Sub alerts watch every lane: `subscription_id = one_of("a", "b", ...)`, with one
  # time series (and so one incident) per subscription (group_by_fields).
  task_subscription_ids        = join(", ", formatlist("\"%s\"", [for lane in var.lanes : google_pubsub_subscription.tasks[lane].name]))
  dead_letter_subscription_ids = join(", ", formatlist("\"%s\"", [for lane in var.lanes : google_pubsub_subscription.dead_letter[lane].name]))
  lanes_text                   = join(", ", var.lanes)
}

# Any message dead-lettered from a lane's task subscription means a task failed
# max_delivery_attempts times.
resource "google_monitoring_alert_policy" "dead_letters" {
  count = var.enable_monitoring ? 1 : 0

  project               = var.project_id
  display_name          = "scrapejobs: tasks dead-lettered (${var.task_subscription}, lanes ${local.lanes_text})"
  combiner              = "OR"
  severity              = "WARNING"
  notification_channels = var.notification_channels

  conditions {
    display_name = "Messages forwarded to ${var.dead_letter_topic} (any lane)"

    condition_threshold {
      filter          = "resource.type = \"pubsub_subscription\" AND resource.labels.subscription_id = one_of(${local.task_subscription_ids}) AND metric.type = \"pubsub.googleapis.com/subscription/dead_letter_message_count\""
      comparison      = "COMPARISON_GT"
      threshold_value = 0
      duration        = "0s"

      aggregations {
        alignment_period     = "300s"
        per_series_aligner   = "ALIGN_SUM"
        cross_series_reducer = "REDUCE_SUM"
        group_by_fields      = ["resource.label.subscription_id"]
      }

      trigger {
        count = 1
      }
    }
  }

  documentation {
    mime_type = "text/markdown"
    subject   = "scrapejobs: tasks were dead-lettered"
    content   = "Tasks exhausted ${var.max_delivery_attempts} delivery attempts on a task subscription (`${var.task_subscription}`, or `${var.task_subscription}-<lane>` for lanes other than normal; the incident names it) and were forwarded to that lane's dead-letter topic. The worker's dead-letter endpoint marks them failed; check the worker logs for the cause. ${local.alert_documentation_footer}"
  }

  alert_strategy {
    auto_close = "1800s"
  }

  depends_on = [google_project_service.apis]
}

# Messages pile up on the dead-letter subscription: the worker's dead-letter endpoint is
# failing, so failed tasks are not being recorded.
resource "google_monitoring_alert_policy" "dead_letter_backlog" {
  count = var.enable_monitoring ? 1 : 0

  project               = var.project_id
  display_name          = "scrapejobs: dead-letter backlog (${var.dead_letter_subscription}, lanes ${local.lanes_text})"
  combiner              = "OR"
  severity              = "ERROR"
  notification_channels = var.notification_channels

  conditions {
    display_name = "Undelivered messages on ${var.dead_letter_subscription} (any lane)"

    condition_threshold {
      filter          = "resource.type = \"pubsub_subscription\" AND resource.labels.subscription_id = one_of(${local.dead_letter_subscription_ids}) AND metric.type = \"pubsub.googleapis.com/subscription/num_undelivered_messages\""
      comparison      = "COMPARISON_GT"
      threshold_value = 0
      duration        = "900s"

      aggregations {
        alignment_period     = "300s"
        per_series_aligner   = "ALIGN_MAX"
        cross_series_reducer = "REDUCE_SUM"
        group_by_fields      = ["resource.label.subscription_id"]
      }

      trigger {
        count = 1
      }
    }
  }

  documentation {
    mime_type = "text/markdown"
    subject   = "scrapejobs: dead letters are not being processed"
    content   = "A dead-letter subscription (`${var.dead_letter_subscription}`, or `${var.dead_letter_subscription}-<lane>`; the incident names it) has had undelivered messages for 15 minutes: the /pubsub/dead-letter endpoint of that lane's worker is failing. ${local.alert_documentation_footer}"
  }

  alert_strategy {
    auto_close = "1800s"
  }

  depends_on = [google_project_service.apis]
}

# The oldest unacknowledged task is too old: the worker is down, saturated (max instances)
# or failing every delivery.
resource "google_monitoring_alert_policy" "task_backlog_age" {
  count = var.enable_monitoring ? 1 : 0

  project               = var.project_id
  display_name          = "scrapejobs: task backlog older than ${var.task_backlog_age_alert_s}s"
  combiner              = "OR"
  severity              = "WARNING"
  notification_channels = var.notification_channels

  conditions {
    display_name = "Oldest unacked message on ${var.task_subscription} (any lane)"

    condition_threshold {
      filter          = "resource.type = \"pubsub_subscription\" AND resource.labels.subscription_id = one_of(${local.task_subscription_ids}) AND metric.type = \"pubsub.googleapis.com/subscription/oldest_unacked_message_age\""
      comparison      = "COMPARISON_GT"
      threshold_value = var.task_backlog_age_alert_s
      duration        = "300s"

      aggregations {
        alignment_period     = "60s"
        per_series_aligner   = "ALIGN_MAX"
        cross_series_reducer = "REDUCE_MAX"
        group_by_fields      = ["resource.label.subscription_id"]
      }

      trigger {
        count = 1
      }
    }
  }

  documentation {
    mime_type = "text/markdown"
    subject   = "scrapejobs: task backlog is not draining"
    content   = "The oldest unacknowledged message on a task subscription (`${var.task_subscription}`, or `${var.task_subscription}-<lane>`; the incident names it) is older than ${var.task_backlog_age_alert_s}s. Check errors of that lane's worker, its max instances (shared worker: ${var.worker_max_instances}; dedicated_lane_workers for the others) and per-host politeness limits. ${local.alert_documentation_footer}"
  }

  alert_strategy {
    auto_close = "1800s"
  }

  depends_on = [google_project_service.apis]
}

# Server errors on the public API.
resource "google_monitoring_alert_policy" "dispatcher_5xx" {
  count = var.enable_monitoring ? 1 : 0

  project               = var.project_id
  display_name          = "scrapejobs: dispatcher 5xx responses"
  combiner              = "OR"
  severity              = "ERROR"
  notification_channels = var.notification_channels

  conditions {
    display_name = "5xx responses from ${local.dispatcher_service_name}"

    condition_threshold {
      filter          = "resource.type = \"cloud_run_revision\" AND resource.labels.service_name = \"${google_cloud_run_v2_service.dispatcher.name}\" AND metric.type = \"run.googleapis.com/request_count\" AND metric.labels.response_code_class = \"5xx\""
      comparison      = "COMPARISON_GT"
      threshold_value = var.dispatcher_5xx_alert_threshold
      duration        = "0s"

      aggregations {
        alignment_period     = "300s"
        per_series_aligner   = "ALIGN_SUM"
        cross_series_reducer = "REDUCE_SUM"
      }

      trigger {
        count = 1
      }
    }
  }

  documentation {
    mime_type = "text/markdown"
    subject   = "scrapejobs: dispatcher is returning server errors"
    content   = "More than ${var.dispatcher_5xx_alert_threshold} 5xx responses in 5 minutes from `${local.dispatcher_service_name}`. Check its logs; roll back with `gcloud run services update-traffic` if a deploy caused it. ${local.alert_documentation_footer}"
  }

  alert_strategy {
    auto_close = "1800s"
  }

  depends_on = [google_project_service.apis]
}
