# The ai stage (docs/api.md, "The ai stage"): who answers it, and what the worker may do for it.
# Unset ai_provider: ai stages are refused (422) and nothing here is created.
#
# - vertex: Gemini on Vertex AI with the worker's own identity: the API is enabled and the worker
#   (the only service that calls the model) gets roles/aiplatform.user on the project; no key.
# - openai: any OpenAI-compatible server (ai_base_url); its key, if it needs one, comes from an
#   existing Secret Manager secret (ai_api_key_secret_id), created and versioned out of band so
#   the key never lands in Terraform state, readable by the worker only.
# The pages' answers are kept 24 h (ai_answers) and the processing lane's handoffs until their
# task finishes (handoffs): both carry expire_at, deleted by TTL policies (firestore.tf).

locals {
  ai_vertex = var.ai_provider == "vertex"
  ai_env = var.ai_provider == "" ? {} : merge({
    SCRAPEJOBS_AI_PROVIDER      = var.ai_provider
    SCRAPEJOBS_AI_MODEL         = var.ai_model
    SCRAPEJOBS_AI_MODELS        = join(",", var.ai_models)
    SCRAPEJOBS_AI_BASE_URL      = var.ai_base_url
    SCRAPEJOBS_AI_LOCATION      = var.ai_location
    SCRAPEJOBS_AI_MAX_IN_FLIGHT = tostring(var.ai_max_in_flight)
  }, local.ai_prices)
  # what a million tokens cost: the API and the dashboard show a cost when either is set
  ai_prices = merge(
    var.ai_price_per_mtok_in == null ? {} : { SCRAPEJOBS_AI_PRICE_PER_MTOK_IN = tostring(var.ai_price_per_mtok_in) },
    var.ai_price_per_mtok_out == null ? {} : { SCRAPEJOBS_AI_PRICE_PER_MTOK_OUT = tostring(var.ai_price_per_mtok_out) },
  )
}

resource "google_project_service" "aiplatform" {
  count = local.ai_vertex ? 1 : 0

  project                    = var.project_id
  service                    = "aiplatform.googleapis.com"
  disable_on_destroy         = false
  disable_dependent_services = false
}

resource "google_project_iam_member" "worker_calls_vertex_ai" {
  count = local.ai_vertex ? 1 : 0

  project = var.project_id
  role    = "roles/aiplatform.user"
  member  = google_service_account.worker.member
}

resource "google_secret_manager_secret_iam_member" "worker_reads_ai_key" {
  count = var.ai_api_key_secret_id == "" ? 0 : 1

  project   = var.project_id
  secret_id = var.ai_api_key_secret_id
  role      = "roles/secretmanager.secretAccessor"
  member    = google_service_account.worker.member
}
