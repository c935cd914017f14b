# Terraform owns the services' configuration; Cloud Build (cloudbuild.yaml) owns the image
# rollout with `gcloud run deploy --image ...`. The image is therefore only set at creation
# and ignored afterwards (see lifecycle.ignore_changes and docs/deploy.md).

resource "google_cloud_run_v2_service" "dispatcher" {
  # Ingress "all": the REST API is called from outside any VPC (users, CI, Cloud Scheduler).
  # Access control is Cloud Run IAM (auth mode "iam") or API keys (auth mode "api_key"); in
  # iam mode, Identity-Aware Proxy in front of it when dispatcher_iap_members is set (iap.tf).
  provider    = google-beta
  iap_enabled = local.dispatcher_iap
  project     = var.project_id
  name        = local.dispatcher_service_name
  location    = var.region
  description = "scrapejobs dispatcher: REST API for job submission and queries."

  ingress             = "INGRESS_TRAFFIC_ALL"
  deletion_protection = var.deletion_protection

  template {
    service_account                  = google_service_account.dispatcher.email
    timeout                          = "${var.dispatcher_request_timeout_s}s"
    max_instance_request_concurrency = var.dispatcher_concurrency
    execution_environment            = "EXECUTION_ENVIRONMENT_GEN2"

    scaling {
      min_instance_count = var.dispatcher_min_instances
      max_instance_count = var.dispatcher_max_instances
    }

    containers {
      name  = "dispatcher"
      image = var.dispatcher_image

      ports {
        container_port = 8080
      }

      resources {
        limits = {
          cpu    = var.dispatcher_cpu
          memory = var.dispatcher_memory
        }
        cpu_idle          = true
        startup_cpu_boost = true
      }

      dynamic "env" {
        for_each = local.dispatcher_env
        content {
          name  = env.key
          value = env.value
        }
      }

      # the proxy pools (credentials inside): the dispatcher checks what a job asks of them
      dynamic "env" {
        for_each = var.proxies_secret_id == "" ? [] : [var.proxies_secret_id]
        content {
          name = "SCRAPEJOBS_PROXIES"
          value_source {
            secret_key_ref {
              secret  = env.value
              version = "latest"
            }
          }
        }
      }

      dynamic "env" {
        for_each = local.api_key_mode ? [google_secret_manager_secret.api_key_hashes[0].secret_id] : []
        content {
          name = "SCRAPEJOBS_API_KEY_HASHES"
          value_source {
            secret_key_ref {
              secret  = env.value
              version = "latest"
            }
          }
        }
      }

      dynamic "env" {
        for_each = local.api_key_mode ? [google_secret_manager_secret.session_key[0].secret_id] : []
        content {
          name = "SCRAPEJOBS_SESSION_KEY"
          value_source {
            secret_key_ref {
              secret  = env.value
              version = "latest"
            }
          }
        }
      }

      startup_probe {
        initial_delay_seconds = 0
        period_seconds        = 2
        timeout_seconds       = 2
        failure_threshold     = 15
        http_get {
          path = "/healthz"
        }
      }

      liveness_probe {
        period_seconds    = 30
        timeout_seconds   = 5
        failure_threshold = 3
        http_get {
          path = "/healthz"
        }
      }
    }
  }

  traffic {
    type    = "TRAFFIC_TARGET_ALLOCATION_TYPE_LATEST"
    percent = 100
  }

  lifecycle {
    # Rolled out by Cloud Build; see the header comment.
    ignore_changes = [
      client,
      client_version,
      template[0].revision,
      template[0].containers[0].image,
    ]

    precondition {
      condition     = var.dispatcher_min_instances <= var.dispatcher_max_instances
      error_message = "dispatcher_min_instances must not exceed dispatcher_max_instances."
    }

    precondition {
      condition     = !local.dispatcher_iap || !local.api_key_mode
      error_message = "dispatcher_iap_members needs dispatcher_auth_mode = \"iam\": in api_key mode the dashboard has its own sign-in."
    }
  }

  depends_on = [
    google_project_service.apis,
    google_project_iam_member.dispatcher_datastore,
    google_secret_manager_secret_iam_member.dispatcher_reads_api_key_hashes,
    google_secret_manager_secret_iam_member.dispatcher_reads_session_key,
    google_secret_manager_secret_iam_member.dispatcher_reads_proxies,
  ]
}

# One service per entry of local.worker_services: "shared" (every lane without a dedicated
# worker), one per lane in dedicated_lane_workers, and the renderer (the render lane). They
# share the code, identity and environment; a service's role (local.worker_roles) sets its
# image, size, concurrency and the renderer's browser settings.
resource "google_cloud_run_v2_service" "worker" {
  for_each = local.worker_services

  project     = var.project_id
  name        = each.value.name
  location    = var.region
  description = each.key == "shared" ? "scrapejobs worker: Pub/Sub push endpoint that fetches and extracts pages." : each.value.role == "renderer" ? "scrapejobs renderer: Pub/Sub push endpoint of the render lane that renders pages in headless Chromium and extracts them." : "scrapejobs worker of the ${each.key} lane: Pub/Sub push endpoint that fetches and extracts pages."

  # Pub/Sub push to Cloud Run only works with ingress "all" unless it goes through a VPC
  # connector/load balancer. The service still has no public invoker: Cloud Run IAM rejects
  # every request without a valid token for an identity holding roles/run.invoker.
  ingress             = "INGRESS_TRAFFIC_ALL"
  deletion_protection = var.deletion_protection

  # Guarantees that tokens minted for the deterministic URL are accepted at the edge.
  custom_audiences = [local.worker_audiences[each.key]]

  template {
    # the renderer runs as its own, lesser identity (iam.tf, "renderer runtime")
    service_account                  = each.value.role == "renderer" ? google_service_account.renderer.email : google_service_account.worker.email
    timeout                          = "${var.worker_request_timeout_s}s"
    max_instance_request_concurrency = local.worker_roles[each.value.role].concurrency
    execution_environment            = "EXECUTION_ENVIRONMENT_GEN2"

    scaling {
      min_instance_count = each.value.min_instances
      max_instance_count = each.value.max_instances
    }

    containers {
      name  = "worker"
      image = local.worker_roles[each.value.role].image

      ports {
        container_port = 8080
      }

      resources {
        limits = {
          cpu    = coalesce(each.value.cpu, local.worker_roles[each.value.role].cpu)
          memory = coalesce(each.value.memory, local.worker_roles[each.value.role].memory)
        }
        cpu_idle          = true
        startup_cpu_boost = true
      }

      dynamic "env" {
        # Each service checks the audience of its own URL.
        for_each = merge(
          local.worker_env,
          local.worker_roles[each.value.role].env,
          { SCRAPEJOBS_PUSH_AUDIENCE = local.worker_audiences[each.key] },
        )
        content {
          name  = env.key
          value = env.value
        }
      }

      # Secrets only where they are used: the renderer signs no webhook and asks no model.
      dynamic "env" {
        for_each = var.webhook_signing_secret_id == "" || each.value.role == "renderer" ? [] : [var.webhook_signing_secret_id]
        content {
          name = "SCRAPEJOBS_WEBHOOK_SECRETS"
          value_source {
            secret_key_ref {
              secret  = env.value
              version = "latest"
            }
          }
        }
      }

      # the proxy pools (credentials inside): every lane's fetches, the renderer's pages' requests too
      dynamic "env" {
        for_each = var.proxies_secret_id == "" ? [] : [var.proxies_secret_id]
        content {
          name = "SCRAPEJOBS_PROXIES"
          value_source {
            secret_key_ref {
              secret  = env.value
              version = "latest"
            }
          }
        }
      }

      dynamic "env" {
        for_each = var.ai_api_key_secret_id == "" || each.value.role == "renderer" ? [] : [var.ai_api_key_secret_id]
        content {
          name = "SCRAPEJOBS_AI_API_KEY"
          value_source {
            secret_key_ref {
              secret  = env.value
              version = "latest"
            }
          }
        }
      }

      startup_probe {
        initial_delay_seconds = 0
        period_seconds        = 2
        timeout_seconds       = 2
        failure_threshold     = 15
        http_get {
          path = "/healthz"
        }
      }

      liveness_probe {
        period_seconds    = 30
        timeout_seconds   = 5
        failure_threshold = 3
        http_get {
          path = "/healthz"
        }
      }
    }
  }

  traffic {
    type    = "TRAFFIC_TARGET_ALLOCATION_TYPE_LATEST"
    percent = 100
  }

  lifecycle {
    # Rolled out by Cloud Build; see the header comment.
    ignore_changes = [
      client,
      client_version,
      template[0].revision,
      template[0].containers[0].image,
    ]

    precondition {
      condition     = var.worker_fetch_timeout_s < var.ack_deadline_s && var.worker_fetch_timeout_s < var.worker_request_timeout_s
      error_message = "worker_fetch_timeout_s must stay below both ack_deadline_s and worker_request_timeout_s."
    }

    precondition {
      condition     = var.worker_request_timeout_s <= var.ack_deadline_s
      error_message = "worker_request_timeout_s must not exceed ack_deadline_s, or Pub/Sub redelivers messages the worker is still processing."
    }

    precondition {
      condition     = var.worker_min_instances <= var.worker_max_instances
      error_message = "worker_min_instances must not exceed worker_max_instances."
    }

    precondition {
      condition     = var.renderer_min_instances >= 0 && var.renderer_min_instances <= var.renderer_max_instances
      error_message = "renderer_min_instances must be between 0 and renderer_max_instances."
    }

    precondition {
      condition     = alltrue([for lane in keys(var.dedicated_lane_workers) : contains(var.lanes, lane)])
      error_message = "Every key of dedicated_lane_workers must be one of lanes."
    }
  }

  depends_on = [
    google_project_service.apis,
    google_project_iam_member.worker_datastore,
    google_secret_manager_secret_iam_member.worker_reads_proxies,
    google_secret_manager_secret_iam_member.renderer_reads_proxies,
  ]
}

# The single worker service of before lanes becomes the shared worker, in place.
moved {
  from = google_cloud_run_v2_service.worker
  to   = google_cloud_run_v2_service.worker["shared"]
}
