# The files pages make in the browser (screenshots): one bucket, objects keyed
# {tenant}/{job}/{task}/{name} (shared/.../ports/file_store.py). Each object's customTime is
# its job's expiry: the lifecycle rule deletes it once that day has passed (the dispatcher stops
# serving it at the expiry itself), and a rule on age ends anything older than the longest
# retention a job may ask for. The renderer, which takes the screenshots, may create and replace
# objects and never read them (a custom role); the dispatcher, which serves them to each job's
# tenant, may read them.

locals {
  files_bucket = "${var.project_id}-${var.name_prefix}-files"
  # the dispatcher's URL as callers reach it: the URLs of the files are under it
  api_url = var.api_url != "" ? var.api_url : "https://${local.dispatcher_service_name}-${local.project_number}.${var.region}.run.app"
}

resource "google_storage_bucket" "files" {
  #checkov:skip=CKV_GCP_62:Access is the dispatcher's and the renderer's identities only; Cloud Audit Logs (data access) cover it without a second bucket.
  #checkov:skip=CKV_GCP_78:Screenshots are kept for their job's retention and replaced when a page is rendered again; versions would keep what was meant to go.
  project  = var.project_id
  name     = local.files_bucket
  location = var.region

  uniform_bucket_level_access = true
  public_access_prevention    = "enforced"
  force_destroy               = !var.deletion_protection

  lifecycle_rule {
    condition {
      days_since_custom_time = 0
    }
    action {
      type = "Delete"
    }
  }

  lifecycle_rule {
    condition {
      age = 3651 # the longest options.retention_days, and a day
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

resource "google_project_iam_custom_role" "files_writer" {
  project     = var.project_id
  role_id     = "${replace(var.name_prefix, "-", "_")}_files_writer"
  title       = "scrapejobs files writer"
  description = "Create and replace objects (screenshots), never read or list them."
  permissions = ["storage.objects.create", "storage.objects.delete"]
}

resource "google_storage_bucket_iam_member" "renderer_writes_files" {
  bucket = google_storage_bucket.files.name
  role   = google_project_iam_custom_role.files_writer.id
  member = google_service_account.renderer.member
}

resource "google_storage_bucket_iam_member" "dispatcher_reads_files" {
  bucket = google_storage_bucket.files.name
  role   = "roles/storage.objectViewer"
  member = google_service_account.dispatcher.member
}
