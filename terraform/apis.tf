locals {
  apis = toset(concat(
    [
      "artifactregistry.googleapis.com",
      "cloudbuild.googleapis.com",
      "cloudresourcemanager.googleapis.com",
      "cloudscheduler.googleapis.com",
      "cloudtrace.googleapis.com",
      "firestore.googleapis.com",
      "iam.googleapis.com",
      "iamcredentials.googleapis.com",
      "logging.googleapis.com",
      "monitoring.googleapis.com",
      "pubsub.googleapis.com",
      "run.googleapis.com",
      "serviceusage.googleapis.com",
      "storage.googleapis.com",
    ],
    local.api_key_mode || var.searxng_service ? ["secretmanager.googleapis.com"] : [],
    local.dispatcher_iap ? ["iap.googleapis.com"] : [],
  ))
}

resource "google_project_service" "apis" {
  for_each = local.apis

  project = var.project_id
  service = each.key

  # Never switch APIs off on destroy: other workloads in the project may rely on them,
  # and disabling e.g. Firestore or Pub/Sub is destructive.
  disable_on_destroy         = false
  disable_dependent_services = false
}
