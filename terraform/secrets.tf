# api_key mode only. Terraform creates the (empty) secret and lets the dispatcher read it;
# the SHA-256 hashes themselves are added out of band (`gcloud secrets versions add`, see
# docs/deploy.md) so that they never land in Terraform state.
resource "google_secret_manager_secret" "api_key_hashes" {
  # Holds SHA-256 hashes of API keys, not the keys: Google-managed encryption is accepted.
  count = local.api_key_mode ? 1 : 0

  project   = var.project_id
  secret_id = "${var.name_prefix}-api-key-hashes"

  replication {
    auto {}
  }

  depends_on = [google_project_service.apis]
}

# api_key mode only: the secret that signs dashboard sessions (SCRAPEJOBS_SESSION_KEY), so
# that reading the key store's digests is not enough to make a session. Versioned out of band
# like the hashes (`openssl rand -base64 48 | gcloud secrets versions add ... --data-file=-`,
# docs/deploy.md): it never lands in Terraform state.
resource "google_secret_manager_secret" "session_key" {
  # A random signing key: Google-managed encryption is accepted.
  count = local.api_key_mode ? 1 : 0

  project   = var.project_id
  secret_id = "${var.name_prefix}-session-key"

  replication {
    auto {}
  }

  depends_on = [google_project_service.apis]
}
