provider "google" {
  project = var.project_id
  region  = var.region

  # Every resource that supports labels gets these (merged with per-resource labels).
  default_labels = local.labels
}

provider "google-beta" {
  project        = var.project_id
  region         = var.region
  default_labels = local.labels
}

# Needs the Cloud Resource Manager API, which docs/deploy.md enables with gcloud before the
# first `terraform apply` (together with the Service Usage API that google_project_service
# itself relies on).
data "google_project" "this" {
  project_id = var.project_id
}
