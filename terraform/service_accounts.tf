# One identity per role; none of them is the default compute service account.

resource "google_service_account" "dispatcher" {
  project      = var.project_id
  account_id   = "${var.name_prefix}-dispatcher"
  display_name = "scrapejobs dispatcher (Cloud Run runtime)"
  description  = "Runtime identity of the dispatcher: Firestore read/write, publish to the task topic."

  depends_on = [google_project_service.apis]
}

resource "google_service_account" "worker" {
  project      = var.project_id
  account_id   = "${var.name_prefix}-worker"
  display_name = "scrapejobs worker (Cloud Run runtime)"
  description  = "Runtime identity of the worker: Firestore read/write, publish discovered tasks to the task topic."

  depends_on = [google_project_service.apis]
}

# The render lane's service runs a browser on hostile pages: its own identity, with only what
# rendering needs (iam.tf, "renderer runtime"): no AI, no webhook keys, no other lane's topic.
resource "google_service_account" "renderer" {
  project      = var.project_id
  account_id   = "${var.name_prefix}-renderer"
  display_name = "scrapejobs renderer (Cloud Run runtime)"
  description  = "Runtime identity of the renderer: the scrapejobs database, publish to the render and processing lanes and the webhook outbox."

  depends_on = [google_project_service.apis]
}

resource "google_service_account" "push_invoker" {
  project      = var.project_id
  account_id   = "${var.name_prefix}-push-invoker"
  display_name = "scrapejobs Pub/Sub push invoker"
  description  = "Identity in the OIDC tokens Pub/Sub attaches to pushes to the worker; may only invoke the worker."

  depends_on = [google_project_service.apis]
}

resource "google_service_account" "scheduler" {
  project      = var.project_id
  account_id   = "${var.name_prefix}-scheduler"
  display_name = "scrapejobs Cloud Scheduler invoker"
  description  = "Identity in the OIDC tokens Cloud Scheduler attaches to scheduled job submissions; may only invoke the dispatcher."

  depends_on = [google_project_service.apis]
}

resource "google_service_account" "build" {
  count = var.create_build_service_account ? 1 : 0

  project      = var.project_id
  account_id   = "${var.name_prefix}-build"
  display_name = "scrapejobs Cloud Build deployer"
  description  = "Runs cloudbuild.yaml: pushes images to the scrapejobs repository and rolls them out to the two Cloud Run services."

  depends_on = [google_project_service.apis]
}
