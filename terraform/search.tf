# SearXNG beside the dispatcher (docs/deploy.md, "Search"), off by default (searxng_service):
# SearXNG's own image, pinned; its settings (the JSON API on) from terraform/searxng/settings.yml,
# mounted from Secret Manager; its secret key (SEARXNG_SECRET) in a secret versioned out of band
# like the session key, so it never lands in Terraform state. Only the dispatcher may call it
# (Cloud Run IAM: the dispatcher sends an ID token, SCRAPEJOBS_SEARXNG_AUDIENCE); its own
# identity holds no role but reading its two secrets. Set searxng_url instead for an instance
# run elsewhere.

resource "google_service_account" "searxng" {
  count = var.searxng_service ? 1 : 0

  project      = var.project_id
  account_id   = "${var.name_prefix}-searxng"
  display_name = "scrapejobs SearXNG (Cloud Run runtime)"
  description  = "Runtime identity of the SearXNG search service: reads its settings and secret key, nothing else."

  depends_on = [google_project_service.apis]
}

resource "google_secret_manager_secret" "searxng_settings" {
  # SearXNG's settings.yml (no credential in it): the only way to mount a file on Cloud Run
  # without an image of our own.
  count = var.searxng_service ? 1 : 0

  project   = var.project_id
  secret_id = "${var.name_prefix}-searxng-settings"

  replication {
    auto {}
  }

  depends_on = [google_project_service.apis]
}

resource "google_secret_manager_secret_version" "searxng_settings" {
  count = var.searxng_service ? 1 : 0

  secret      = google_secret_manager_secret.searxng_settings[0].id
  secret_data = file("${path.module}/searxng/settings.yml")
}

resource "google_secret_manager_secret" "searxng_secret" {
  # A random key signing SearXNG's cookies: Google-managed encryption is accepted. Versioned
  # out of band (`openssl rand -hex 32 | gcloud secrets versions add ... --data-file=-`).
  count = var.searxng_service ? 1 : 0

  project   = var.project_id
  secret_id = "${var.name_prefix}-searxng-secret"

  replication {
    auto {}
  }

  depends_on = [google_project_service.apis]
}

resource "google_secret_manager_secret_iam_member" "searxng_reads_its_secrets" {
  for_each = var.searxng_service ? {
    settings = google_secret_manager_secret.searxng_settings[0].secret_id
    secret   = google_secret_manager_secret.searxng_secret[0].secret_id
  } : {}

  project   = var.project_id
  secret_id = each.value
  role      = "roles/secretmanager.secretAccessor"
  member    = google_service_account.searxng[0].member
}

resource "google_cloud_run_v2_service" "searxng" {
  # Ingress "all" with no public invoker: Cloud Run IAM lets only the dispatcher's identity in.
  count = var.searxng_service ? 1 : 0

  project     = var.project_id
  name        = "${var.name_prefix}-searxng"
  location    = var.region
  description = "scrapejobs search provider: SearXNG's JSON API, called by the dispatcher only."

  ingress             = "INGRESS_TRAFFIC_ALL"
  deletion_protection = var.deletion_protection

  template {
    service_account                  = google_service_account.searxng[0].email
    timeout                          = "30s"
    max_instance_request_concurrency = 20
    execution_environment            = "EXECUTION_ENVIRONMENT_GEN2"

    scaling {
      min_instance_count = 0
      max_instance_count = var.searxng_max_instances
    }

    volumes {
      name = "settings"
      secret {
        secret = google_secret_manager_secret.searxng_settings[0].secret_id
        items {
          version = google_secret_manager_secret_version.searxng_settings[0].version
          path    = "settings.yml"
        }
      }
    }

    containers {
      name  = "searxng"
      image = var.searxng_image

      ports {
        container_port = 8080
      }

      resources {
        limits = {
          cpu    = "1"
          memory = "1Gi"
        }
        cpu_idle          = true
        startup_cpu_boost = true
      }

      volume_mounts {
        name       = "settings"
        mount_path = "/etc/scrapejobs-searxng"
      }

      env {
        name  = "SEARXNG_SETTINGS_PATH"
        value = "/etc/scrapejobs-searxng/settings.yml"
      }

      env {
        name  = "SEARXNG_BIND_ADDRESS"
        value = "0.0.0.0"
      }

      env {
        name  = "SEARXNG_PORT"
        value = "8080"
      }

      env {
        name = "SEARXNG_SECRET"
        value_source {
          secret_key_ref {
            secret  = google_secret_manager_secret.searxng_secret[0].secret_id
            version = "latest"
          }
        }
      }

      startup_probe {
        period_seconds    = 5
        failure_threshold = 12
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
    ignore_changes = [client, client_version]

    precondition {
      condition     = var.searxng_url == ""
      error_message = "searxng_service runs SearXNG and searches through it: leave searxng_url empty."
    }
  }

  depends_on = [
    google_project_service.apis,
    google_secret_manager_secret_iam_member.searxng_reads_its_secrets,
  ]
}

resource "google_cloud_run_v2_service_iam_member" "dispatcher_invokes_searxng" {
  count = var.searxng_service ? 1 : 0

  project  = var.project_id
  location = google_cloud_run_v2_service.searxng[0].location
  name     = google_cloud_run_v2_service.searxng[0].name
  role     = "roles/run.invoker"
  member   = google_service_account.dispatcher.member
}
