# Proxy pools (docs/deploy.md, "Proxies"): one Secret Manager secret, created and versioned out
# of band, holds SCRAPEJOBS_PROXIES (its credentials never reach Terraform's state). The
# dispatcher reads it to check what a job asks of the pools (a country or a tier none serves is
# refused at submit); the workers, every lane, route pages through them, and the renderer a
# rendered page's requests (its only secret).

resource "google_secret_manager_secret_iam_member" "dispatcher_reads_proxies" {
  count = var.proxies_secret_id == "" ? 0 : 1

  project   = var.project_id
  secret_id = var.proxies_secret_id
  role      = "roles/secretmanager.secretAccessor"
  member    = google_service_account.dispatcher.member
}

resource "google_secret_manager_secret_iam_member" "worker_reads_proxies" {
  count = var.proxies_secret_id == "" ? 0 : 1

  project   = var.project_id
  secret_id = var.proxies_secret_id
  role      = "roles/secretmanager.secretAccessor"
  member    = google_service_account.worker.member
}

resource "google_secret_manager_secret_iam_member" "renderer_reads_proxies" {
  count = var.proxies_secret_id == "" ? 0 : 1

  project   = var.project_id
  secret_id = var.proxies_secret_id
  role      = "roles/secretmanager.secretAccessor"
  member    = google_service_account.renderer.member
}
