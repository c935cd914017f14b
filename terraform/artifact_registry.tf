resource "google_artifact_registry_repository" "images" {
  #checkov:skip=CKV_GCP_84:Images are not secret; Google-managed encryption at rest is accepted (set up CMEK project-wide if policy requires it).
  project       = var.project_id
  location      = var.region
  repository_id = var.artifact_registry_repository
  format        = "DOCKER"
  description   = "Container images of the scrapejobs dispatcher and worker (tagged with the git commit SHA)."

  docker_config {
    immutable_tags = var.artifact_registry_immutable_tags
  }

  cleanup_policy_dry_run = false

  # Keep the most recent images (rollback targets); prune untagged layers after a week and
  # anything else once it is older than artifact_registry_retention_days. KEEP wins over DELETE.
  cleanup_policies {
    id     = "keep-recent"
    action = "KEEP"
    most_recent_versions {
      keep_count = var.artifact_registry_keep_count
    }
  }

  cleanup_policies {
    id     = "delete-untagged"
    action = "DELETE"
    condition {
      tag_state  = "UNTAGGED"
      older_than = "604800s"
    }
  }

  cleanup_policies {
    id     = "delete-old"
    action = "DELETE"
    condition {
      tag_state  = "ANY"
      older_than = "${var.artifact_registry_retention_days * 86400}s"
    }
  }

  depends_on = [google_project_service.apis]
}
