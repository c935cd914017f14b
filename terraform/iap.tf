# Identity-Aware Proxy in front of the dispatcher (iam mode, when dispatcher_iap_members is
# set): a person opens the dashboard (/ui) in a browser and signs in with a Google identity.
# IAP is enabled on the Cloud Run service itself (no load balancer); it checks the member's
# roles/iap.httpsResourceAccessor, then calls the service as the IAP service agent, which
# Cloud Run IAM lets in. API callers and Cloud Scheduler pass through IAP as well, so they
# get the same accessor role. Beta-only resources in provider 6.x (versions.tf).

resource "google_project_service_identity" "iap" {
  count    = local.dispatcher_iap ? 1 : 0
  provider = google-beta

  project = var.project_id
  service = "iap.googleapis.com"

  depends_on = [google_project_service.apis]
}

resource "google_cloud_run_v2_service_iam_member" "iap_invokes_dispatcher" {
  count = local.dispatcher_iap ? 1 : 0

  project  = var.project_id
  location = google_cloud_run_v2_service.dispatcher.location
  name     = google_cloud_run_v2_service.dispatcher.name
  role     = "roles/run.invoker"
  member   = "serviceAccount:${google_project_service_identity.iap[0].email}"
}

resource "google_iap_web_cloud_run_service_iam_member" "dispatcher_iap_members" {
  for_each = toset(local.dispatcher_iap ? concat(var.dispatcher_iap_members, var.dispatcher_invokers) : [])
  provider = google-beta

  project                = var.project_id
  location               = google_cloud_run_v2_service.dispatcher.location
  cloud_run_service_name = google_cloud_run_v2_service.dispatcher.name
  role                   = "roles/iap.httpsResourceAccessor"
  member                 = each.key
}

resource "google_iap_web_cloud_run_service_iam_member" "scheduler_through_iap" {
  count    = local.dispatcher_iap ? 1 : 0
  provider = google-beta

  project                = var.project_id
  location               = google_cloud_run_v2_service.dispatcher.location
  cloud_run_service_name = google_cloud_run_v2_service.dispatcher.name
  role                   = "roles/iap.httpsResourceAccessor"
  member                 = google_service_account.scheduler.member
}
