# Recurring jobs: each entry of var.schedules becomes a Cloud Scheduler job that POSTs its
# JSON body to the dispatcher's /v1/jobs with an OIDC token of the scheduler identity.
# Cloud Scheduler adds X-CloudScheduler-JobName / X-CloudScheduler-ScheduleTime headers,
# from which the dispatcher derives the job id, so a retried trigger never submits twice.
resource "google_cloud_scheduler_job" "schedules" {
  for_each = var.schedules

  project          = var.project_id
  region           = local.scheduler_region
  name             = "${var.name_prefix}-${each.key}"
  description      = coalesce(each.value.description, "scrapejobs schedule ${each.key}")
  schedule         = each.value.cron
  time_zone        = each.value.time_zone
  paused           = each.value.paused
  attempt_deadline = "${var.dispatcher_request_timeout_s}s"

  retry_config {
    retry_count          = var.scheduler_retry_count
    min_backoff_duration = "10s"
    max_backoff_duration = "300s"
    max_doublings        = 3
  }

  http_target {
    http_method = "POST"
    uri         = "${google_cloud_run_v2_service.dispatcher.uri}/v1/jobs?tenant=${each.value.tenant}"
    # Re-encode so that formatting differences in the variable never cause a diff.
    body = base64encode(jsonencode(jsondecode(each.value.body)))
    # In api_key mode the dispatcher only accepts X-API-Key; in iam mode Cloud Run checks the
    # OIDC token below at the edge.
    headers = merge(
      { "Content-Type" = "application/json" },
      { for k, v in { "X-API-Key" = var.scheduler_api_key } : k => v if local.api_key_mode },
    )

    oidc_token {
      service_account_email = google_service_account.scheduler.email
      audience              = google_cloud_run_v2_service.dispatcher.uri
    }
  }

  lifecycle {
    precondition {
      condition     = !local.api_key_mode || var.scheduler_api_key != null
      error_message = "dispatcher_auth_mode = \"api_key\" needs scheduler_api_key for scheduled jobs."
    }
  }

  depends_on = [
    google_project_service.apis,
    google_cloud_run_v2_service_iam_member.scheduler_invokes_dispatcher,
  ]
}

# Maintenance: calls the dispatcher makes to itself on a schedule.
# - republish-stuck, every 10 minutes: publish again the queued tasks of submissions that
#   stopped between writing their tasks and publishing them (a dispatcher stopped mid-submission).
# - reconcile, every 5 minutes: publish again the batches with open tasks that nothing has
#   written for longer than a redelivery can take (reconcile_after_s) and no delivery holds:
#   messages the broker lost (a purge, a seek, a deleted subscription, retention running out).
# - monitors, every minute: start the check of each active monitor whose next check time has
#   come (one indexed query; a check's id comes from its monitor and time, so a tick retried or
#   delivered twice starts one check). One tick for every monitor, not a Scheduler job each:
#   Cloud Scheduler's jobs per region are limited and billed per job, and a tick needs no
#   Terraform change when a monitor is created; a monitor's finest schedule is a minute.
resource "google_cloud_scheduler_job" "maintenance" {
  for_each = local.maintenance_jobs

  project          = var.project_id
  region           = local.scheduler_region
  name             = "${var.name_prefix}-${each.key}"
  description      = each.value.description
  schedule         = each.value.schedule
  time_zone        = "Etc/UTC"
  attempt_deadline = "${var.dispatcher_request_timeout_s}s"

  retry_config {
    retry_count = 1
  }

  http_target {
    http_method = "POST"
    uri         = "${google_cloud_run_v2_service.dispatcher.uri}${each.value.path}"
    headers     = { for k, v in { "X-API-Key" = var.scheduler_api_key } : k => v if local.api_key_mode }

    oidc_token {
      service_account_email = google_service_account.scheduler.email
      audience              = google_cloud_run_v2_service.dispatcher.uri
    }
  }

  lifecycle {
    precondition {
      condition     = !local.api_key_mode || var.scheduler_api_key != null
      error_message = "dispatcher_auth_mode = \"api_key\" needs scheduler_api_key (maintenance jobs)."
    }
  }

  depends_on = [
    google_project_service.apis,
    google_cloud_run_v2_service_iam_member.scheduler_invokes_dispatcher,
  ]
}
