# Staging bucket for `gcloud builds submit --gcs-source-staging-dir=gs://<bucket>/source`:
# a user-specified build service account must be able to read the uploaded sources, and a
# dedicated bucket lets it read nothing else. Sources are copies of a git commit and are
# deleted after a week.
resource "google_storage_bucket" "build_source" {
  #checkov:skip=CKV_GCP_62:Holds throw-away copies of committed sources only; Cloud Audit Logs cover access, a separate access-log bucket adds cost without value.
  #checkov:skip=CKV_GCP_78:Objects are disposable build inputs (deleted after 7 days) reproducible from git; versioning would only retain garbage.
  count = var.create_build_service_account ? 1 : 0

  project  = var.project_id
  name     = "${var.project_id}-${var.name_prefix}-build-src"
  location = var.region

  uniform_bucket_level_access = true
  public_access_prevention    = "enforced"
  force_destroy               = true

  lifecycle_rule {
    condition {
      age = 7
    }
    action {
      type = "Delete"
    }
  }

  soft_delete_policy {
    retention_duration_seconds = 0
  }

  depends_on = [google_project_service.apis]
}
